/**
 * The search workload that goes with the corpus: queries of every kind, built from words that are certain
 * to occur in their tenant, read from the start of the very corpus a run writes.
 */
import type { RecordType } from '../shared/domain/record.js';
import type { RecallQuery } from '../shared/domain/schemas.js';
import { ENGLISH_STOP_WORDS } from '../shared/domain/stop-words.js';
import { generateCorpus } from './corpus-generator.js';
import { mulberry32, pickOne, type Rng } from './corpus-random.js';
import { DEFAULT_SEED, tenantsFor, type CorpusOptions, type TenantSpec } from './corpus-tenants.js';
import { VOCABULARY } from './corpus-vocabulary.js';
import { specs, words } from './corpus-words.js';

/** The kinds of search the workload holds, each measured on its own. */
export const QUERY_KINDS = [
  'one-word',
  'multi-word',
  'phrase',
  'filter-agent',
  'filter-type',
  'filter-since',
  'no-q',
  'common-words',
  'rare-words',
  'question',
] as const;
/** One kind of search of the workload. */
export type QueryKind = (typeof QUERY_KINDS)[number];

/** One search of the workload: its kind, its tenant and the query as the API takes it. */
export interface BenchQuery {
  kind: QueryKind;
  tenant: string;
  query: RecallQuery;
}

/** How many records of the corpus' start the workload reads to find words that occur. */
const WORKLOAD_SCAN = 50_000;
/** How much of a body the workload reads: the start of a note is what a person remembers. */
const BODY_HEAD = 300;
/** How many records per tenant the workload keeps to draw queries from. */
const SAMPLE_PER_TENANT = 1000;

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const NON_WORD = /[^\p{L}\p{N}\p{M}]+/u;
const LETTERS = /^\p{L}+$/u;
/** Words nobody searches for although they are not stop words to the engine. */
const FUNCTION_WORDS = new Set(
  words(`
    about after again also any because been before being both can could did does each from had has have her here him
    his how its just more most much our out over own same she should some than them very were what when where which
    while who why would you your yet via per they'd usually again still only every this`),
);
const isContent = (w: string) => w.length >= 3 && LETTERS.test(w) && !ENGLISH_STOP_WORDS.has(w) && !FUNCTION_WORDS.has(w);

/** The words of a text a person might search for: lower-cased, split as the service splits, no stop or function words. */
function contentWords(text: string): string[] {
  return text.toLowerCase().split(NON_WORD).filter(isContent);
}

/** Pairs of content words that stand side by side, separated by one space, as a quoted phrase matches them. */
function adjacentPairs(text: string): [string, string][] {
  const lower = text.toLowerCase();
  const pairs: [string, string][] = [];
  let previous: { word: string; end: number } | null = null;
  for (const m of lower.matchAll(WORD)) {
    const word = m[0];
    const content = isContent(word);
    if (content && previous !== null && previous.end + 1 === m.index && lower[previous.end] === ' ') pairs.push([previous.word, word]);
    previous = content ? { word, end: m.index + word.length } : null;
  }
  return pairs;
}

interface Sample {
  agent_id: string;
  type: RecordType;
  client: string | null;
  /** The title, and the start of the body: the words a person remembers of a note. */
  text: string;
}

interface TenantProfile {
  samples: Sample[];
  counts: Map<string, number>;
}

function profileTenants(options: CorpusOptions, rng: Rng): Map<string, TenantProfile> {
  const profiles = new Map<string, TenantProfile>();
  const seen = new Map<string, number>();
  let read = 0;
  for (const { tenant, record } of generateCorpus(options)) {
    if (read++ === WORKLOAD_SCAN) break;
    let profile = profiles.get(tenant);
    if (!profile) profiles.set(tenant, (profile = { samples: [], counts: new Map() }));
    // Counting the title and the start of the body is enough to know which words occur, at a third of the cost.
    const cut = record.body.length <= BODY_HEAD ? record.body.length : record.body.lastIndexOf(' ', BODY_HEAD);
    const head = `${record.title}\n${record.body.slice(0, cut)}`; // a new line, so no phrase spans the two
    for (const w of contentWords(head)) profile.counts.set(w, (profile.counts.get(w) ?? 0) + 1);
    // Reservoir sampling keeps an even sample of the tenant's records, however many there are.
    const n = (seen.get(tenant) ?? 0) + 1;
    seen.set(tenant, n);
    const slot = n <= SAMPLE_PER_TENANT ? n - 1 : Math.floor(rng() * n);
    if (slot < SAMPLE_PER_TENANT) {
      const text = rng() < 0.7 ? record.title : head;
      profile.samples[slot] = { agent_id: record.agent_id, type: record.type, client: record.client ?? null, text };
    }
  }
  return profiles;
}

/**
 * The question kind: whole questions as agents ask them. {n} is a noun, {v} a verb and {p} a person's name
 * from the corpus' vocabulary, each one that occurs at least twice in the tenant's scanned records.
 */
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

/** The words a tenant's questions are made of: the vocabulary's nouns (its domain's too), verbs and names that it holds. */
function questionWords(spec: TenantSpec, counts: ReadonlyMap<string, number>): Record<'n' | 'v' | 'p', string[]> {
  const occurs = (w: string) => (counts.get(w) ?? 0) >= 2;
  const first = (list: string) => specs(list).map((s) => s.split(':')[0]!.toLowerCase());
  const nouns = [...new Set([...first(VOCABULARY.nouns), ...first(VOCABULARY.domains[spec.domain].nouns)])].filter(occurs);
  const verbs = first(VOCABULARY.verbs).filter(occurs);
  const persons = first(VOCABULARY.persons).filter(occurs);
  return { n: nouns.length > 0 ? nouns : ['note'], v: verbs.length > 0 ? verbs : ['update'], p: persons.length > 0 ? persons : ['sarah'] };
}

/** A question from a template, with a capital first letter half of the time and a question mark. */
function question(slots: Record<'n' | 'v' | 'p', string[]>, rng: Rng): string {
  const q = pickOne(QUESTION_TEMPLATES, rng).replace(/\{(n|v|p)\}/g, (_, slot: 'n' | 'v' | 'p') => {
    const word = pickOne(slots[slot], rng);
    return slot === 'p' ? word.charAt(0).toUpperCase() + word.slice(1) : word;
  });
  return `${rng() < 0.5 ? q.charAt(0).toUpperCase() + q.slice(1) : q}?`;
}

/** The start of the previous UTC day: every record a run has just written is on or after it. */
function startOfYesterdayUtc(now = new Date()): string {
  const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - 1));
  return day.toISOString().slice(0, 10);
}

/**
 * The searches of the benchmark, `perKind` of each kind, spread evenly over the tenants (so the tiny tenant
 * is measured too, not only in proportion to its size). Deterministic for (records, seed, since). Each
 * query is built from words that occur in its tenant's records: words and phrases of a sampled record,
 * the tenant's most frequent words, and its rarest (code names, tail words) for the rare kind.
 *
 * `since` is the bound of the `filter-since` queries. The service stamps `created_at` itself at write
 * time, so no date inside the corpus is known in advance; the default, the start of yesterday (UTC),
 * keeps every record a run writes within a day, even across midnight. A runner that wants a selective
 * bound passes an instant from the middle of its load.
 */
export function queryWorkload(options: CorpusOptions, perKind: number, settings: { since?: string } = {}): BenchQuery[] {
  const rng = mulberry32((options.seed ?? DEFAULT_SEED) ^ 0x5eed_cafe);
  const profiles = profileTenants(options, rng);
  const tenants = tenantsFor(options).filter((t) => profiles.has(t.name));
  const specOf = new Map(tenants.map((t) => [t.name, t]));
  const since = settings.since ?? startOfYesterdayUtc();
  const limit = () => (rng() < 0.8 ? 20 : pickOne([5, 10, 50, 100], rng));
  const ranked = new Map(
    [...profiles].map(([name, p]) => [name, [...p.counts].filter(([w]) => w.length >= 4).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))]),
  );

  const queries: BenchQuery[] = [];
  for (const kind of QUERY_KINDS) {
    for (let i = 0; i < perKind && tenants.length > 0; i++) {
      const tenant = tenants[i % tenants.length]!.name;
      const profile = profiles.get(tenant)!;
      const sample = pickOne(profile.samples, rng);
      const ranks = ranked.get(tenant)!;
      const found = contentWords(sample.text);
      const sampleWords = found.length > 0 ? found : [ranks[0]![0]];
      const word = () => pickOne(sampleWords, rng);
      const distinct = (n: number) => [...new Set(Array.from({ length: n }, word))].join(' ');
      let query: RecallQuery;
      switch (kind) {
        case 'one-word':
          query = { q: word() };
          break;
        case 'multi-word':
          query = { q: distinct(2 + Math.floor(rng() * 3)) };
          break;
        case 'phrase': {
          // The first sampled record, from a random start, whose text has two content words side by side.
          const start = Math.floor(rng() * profile.samples.length);
          let pairs: [string, string][] = [];
          for (let k = 0; k < profile.samples.length && pairs.length === 0; k++) {
            pairs = adjacentPairs(profile.samples[(start + k) % profile.samples.length]!.text);
          }
          const [a, b] = pairs.length > 0 ? pickOne(pairs, rng) : [word(), word()];
          const extra = sampleWords.filter((w) => w !== a && w !== b);
          query = { q: rng() < 0.75 || extra.length === 0 ? `"${a} ${b}"` : `"${a} ${b}" ${pickOne(extra, rng)}` };
          break;
        }
        case 'filter-agent':
          query = { q: distinct(1 + Math.floor(rng() * 2)), agent_id: sample.agent_id };
          break;
        case 'filter-type':
          query = { q: distinct(1 + Math.floor(rng() * 2)), type: sample.type };
          break;
        case 'filter-since':
          query = { q: distinct(1 + Math.floor(rng() * 2)), since };
          break;
        case 'no-q': {
          const variant = i % 4;
          query = variant === 1 ? { agent_id: sample.agent_id } : variant === 2 ? { type: sample.type } : variant === 3 && sample.client !== null ? { client: sample.client } : {};
          break;
        }
        case 'common-words': {
          const top = ranks.slice(0, 20);
          query = { q: [...new Set(Array.from({ length: 2 + Math.floor(rng() * 2) }, () => pickOne(top, rng)[0]))].join(' ') };
          break;
        }
        case 'question':
          query = { q: question(questionWords(specOf.get(tenant)!, profile.counts), rng) };
          break;
        case 'rare-words': {
          // The tenant's least frequent words: once or twice in the part read, a handful in a large corpus.
          // Every word as rare as the 5 % least frequent, so that ties are not broken by the alphabet.
          const bound = ranks[Math.max(0, ranks.length - Math.max(20, Math.floor(ranks.length * 0.05)))]![1];
          const tail = ranks.filter(([, count]) => count <= bound);
          query = { q: [...new Set(Array.from({ length: rng() < 0.7 ? 1 : 2 }, () => pickOne(tail, rng)[0]))].join(' ') };
          break;
        }
      }
      queries.push({ kind, tenant, query: { ...query, limit: limit() } });
    }
  }
  return queries;
}
