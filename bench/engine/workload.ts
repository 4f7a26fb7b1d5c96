/**
 * The engine benchmark's queries: the text kinds of bench/corpus.ts's workload, for chosen tenants, and one
 * kind of its own, `question`: whole English questions as an agent asks them ("when did we decide to
 * renew the contract"), built from the corpus' verbs, nouns and names that occur in the tenant. Their
 * words that are not stop words ("when", "did", "we", "decide") all become OR-ed terms, so a question
 * matches most of a tenant: the hardest case for an engine that cannot prune.
 *
 * Deterministic for (records, seed, perKind, tenants).
 */
import { DEFAULT_SEED, generateCorpus, queryWorkload, tenantsFor, type CorpusOptions, type QueryKind } from '../corpus.js';
import { VOCABULARY } from '../corpus-vocabulary.js';
import { parseQuery, type ParsedQuery } from '../../shared/domain/query-parse.js';

/** The workload's kinds that search text, and the question kind. Filters and no-q are left out (text only). */
export const TEXT_KINDS = ['one-word', 'multi-word', 'phrase', 'common-words', 'rare-words', 'question'] as const;
export type TextKind = (typeof TEXT_KINDS)[number];

export interface EngineQuery {
  kind: TextKind;
  tenant: string;
  /** The `q` as a caller sends it. */
  q: string;
  parsed: ParsedQuery;
  /** How many results it asks for (`limit`). */
  k: number;
}

/** As bench/corpus.ts reads the corpus' start to find words that occur. */
const WORKLOAD_SCAN = 50_000;

/** mulberry32, as bench/corpus.ts (a seeded stream, never Math.random). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const QUESTION_TEMPLATES = [
  'when did we decide to {v} the {n}',
  'what did {p} say about the {n}',
  'why did we {v} the {n}',
  'how do we {v} the {n} {n}',
  'who is supposed to {v} the {n} for {p}',
  'what was the outcome of the {n} {n} with {p}',
  'did anyone {v} the {n} after the {n}',
  'where are we on the {n} {p} asked about',
  'what do we know about the {n}',
  'is there a note about {p} and the {n}',
];

const listOf = (text: string) => [...new Set(text.trim().split(/\s+/).map((spec) => spec.split(':')[0]!.toLowerCase()))];

/** Each tenant's words (lower case) with how often they occur in the corpus' first WORKLOAD_SCAN records. */
function wordCounts(options: CorpusOptions, tenants: ReadonlySet<string>): Map<string, Map<string, number>> {
  const counts = new Map<string, Map<string, number>>();
  let read = 0;
  for (const { tenant, record } of generateCorpus(options)) {
    if (read++ === WORKLOAD_SCAN) break;
    if (!tenants.has(tenant)) continue;
    let c = counts.get(tenant);
    if (!c) counts.set(tenant, (c = new Map()));
    for (const w of `${record.title} ${record.body}`.toLowerCase().match(/[\p{L}\p{N}\p{M}]+/gu) ?? []) c.set(w, (c.get(w) ?? 0) + 1);
  }
  return counts;
}

/** `perKind` questions per tenant, from the corpus' verbs, nouns and names that occur at least twice in the tenant. */
function questions(options: CorpusOptions, tenants: readonly string[], perKind: number): { tenant: string; q: string }[] {
  const rng = mulberry32((options.seed ?? DEFAULT_SEED) ^ 0x0a5c_0f1e);
  const pick = <T>(items: readonly T[]) => items[Math.floor(rng() * items.length)]!;
  const counts = wordCounts(options, new Set(tenants));
  const specs = new Map(tenantsFor(options).map((t) => [t.name, t]));
  const out: { tenant: string; q: string }[] = [];
  for (const tenant of tenants) {
    const c = counts.get(tenant) ?? new Map<string, number>();
    const occurs = (w: string) => (c.get(w) ?? 0) >= 2;
    const domain = specs.get(tenant)?.domain;
    const nouns = [...new Set([...listOf(VOCABULARY.nouns), ...(domain ? listOf(VOCABULARY.domains[domain].nouns) : [])])].filter(occurs);
    const verbs = listOf(VOCABULARY.verbs).filter(occurs);
    const persons = listOf(VOCABULARY.persons).filter(occurs);
    const slot = { n: nouns.length > 0 ? nouns : ['note'], v: verbs.length > 0 ? verbs : ['update'], p: persons.length > 0 ? persons : ['sarah'] };
    for (let i = 0; i < perKind; i++) {
      const q = pick(QUESTION_TEMPLATES).replace(/\{(n|v|p)\}/g, (_, s: 'n' | 'v' | 'p') => {
        const word = pick(slot[s]);
        return s === 'p' ? word.charAt(0).toUpperCase() + word.slice(1) : word;
      });
      out.push({ tenant, q: (rng() < 0.5 ? q.charAt(0).toUpperCase() + q.slice(1) : q) + '?' });
    }
  }
  return out;
}

/**
 * `perKind` queries of every text kind for each of `tenants`. The corpus kinds come from queryWorkload
 * (bench/corpus.ts), which deals its queries to the tenants in turn: asked for perKind × (number of
 * tenants), it gives each tenant perKind of each kind. `k` is the query's limit, as the workload draws it.
 */
export function engineWorkload(options: CorpusOptions, tenants: readonly string[], perKind: number): EngineQuery[] {
  const all = queryWorkload(options, perKind * tenantsFor(options).length);
  const queries: EngineQuery[] = [];
  const limitRng = mulberry32((options.seed ?? DEFAULT_SEED) ^ 0x1111_2222);
  const asked = questions(options, tenants, perKind);
  for (const kind of TEXT_KINDS) {
    for (const tenant of tenants) {
      if (kind === 'question') {
        for (const { q } of asked.filter((a) => a.tenant === tenant)) {
          const k = limitRng() < 0.8 ? 20 : [5, 10, 50, 100][Math.floor(limitRng() * 4)]!;
          queries.push({ kind, tenant, q, parsed: parseQuery(q)!, k });
        }
        continue;
      }
      const mine = all.filter((b) => b.kind === (kind satisfies QueryKind) && b.tenant === tenant).slice(0, perKind);
      for (const b of mine) {
        const parsed = parseQuery(b.query.q);
        if (parsed === null) continue;
        queries.push({ kind, tenant, q: b.query.q!, parsed, k: b.query.limit ?? 20 });
      }
    }
  }
  return queries;
}
