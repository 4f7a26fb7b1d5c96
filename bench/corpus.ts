/**
 * The benchmark's corpus: a deterministic, streaming generator of agent memories that read like the real
 * thing, and the search workload that goes with it. Same `records` and `seed`, same corpus, byte for byte.
 *
 * - Tenants of very different sizes (half the records down to half a percent), each with a domain
 *   (support, sales, engineering, a clinic, a personal assistant) whose nouns, agents and clients it uses.
 * - All six types, each with its own title and body templates ("Decided to …", "Follow up with … about …").
 * - Every slot draws its word from a list ranked by frequency with Zipf's law (s = 1), so a few words are
 *   everywhere and most are rare; made-up code names and ticket numbers give the long tail of words that
 *   occur only a handful of times, as names do in real notes.
 * - Titles of 5 to 25 words; bodies of 50 bytes to 8 KiB, log-normal (median about 300 bytes).
 *
 * Records are drawn one at a time from one seeded PRNG, so `queryWorkload` can read the start of the very
 * corpus a run writes (up to 50 000 records) and build its queries from words that are certain to occur.
 */
import type { RecordInput, RecordType } from '../shared/domain/record.js';
import type { RecallQuery } from '../shared/domain/schemas.js';
import { ENGLISH_STOP_WORDS } from '../shared/domain/stop-words.js';
import { VOCABULARY } from './corpus-vocabulary.js';

export interface CorpusOptions {
  records: number;
  seed?: number;
}

/** The field a tenant works in, which picks its nouns, phrases and agent names. */
export type Domain = 'support' | 'sales' | 'engineering' | 'health' | 'personal';

export interface TenantSpec {
  name: string;
  /** The fraction of the corpus' records that belong to the tenant. */
  share: number;
  /** How many distinct agents write its records. */
  agents: number;
  /** How many distinct clients its records name. */
  clients: number;
  domain: Domain;
}

export interface CorpusRecord {
  tenant: string;
  record: RecordInput;
}

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
export type QueryKind = (typeof QUERY_KINDS)[number];

export interface BenchQuery {
  kind: QueryKind;
  tenant: string;
  query: RecallQuery;
}

export const DEFAULT_SEED = 20_260_520;

/** The body sizes the generator keeps to (UTF-8 bytes). */
export const BODY_BYTES = { min: 50, max: 8192 } as const;
/** The title lengths the generator keeps to (words separated by single spaces). */
export const TITLE_WORDS = { min: 5, max: 25 } as const;

const TENANT_PLAN: { name: string; share: number; domain: Domain; clientsPerRoot: number }[] = [
  { name: 'northwind-support', share: 0.5, domain: 'support', clientsPerRoot: 2 },
  { name: 'bluepeak-sales', share: 0.25, domain: 'sales', clientsPerRoot: 3 },
  { name: 'initech-engineering', share: 0.12, domain: 'engineering', clientsPerRoot: 0.4 },
  { name: 'riverside-clinic', share: 0.08, domain: 'health', clientsPerRoot: 1 },
  { name: 'hearth-assistant', share: 0.045, domain: 'personal', clientsPerRoot: 0.2 },
  { name: 'solo-dev', share: 0.005, domain: 'engineering', clientsPerRoot: 0.3 },
];

const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, n));

/** The tenants of a corpus: six, from half the records down to half a percent; agents and clients grow with size. */
export function tenantsFor(options: CorpusOptions): TenantSpec[] {
  return TENANT_PLAN.map(({ name, share, domain, clientsPerRoot }) => {
    const root = Math.sqrt(share * options.records);
    return {
      name,
      share,
      domain,
      agents: clamp(Math.round(root / 2), 2, 300),
      clients: clamp(Math.round(root * clientsPerRoot), 1, 2000),
    };
  });
}

// ---------------------------------------------------------------------------------------------------------
// Randomness: one seeded stream, never Math.random.

type Rng = () => number;

// Bound once: inside a vm context (Jest), every read of a global such as `Math` goes through a slow
// interceptor, which made the generator five times slower there.
const { imul, floor } = Math;

/** mulberry32: a small, fast 32-bit PRNG, uniform in [0, 1): the same seed, the same sequence. The one the benchmarks and tests draw from. */
export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = imul(a ^ (a >>> 15), 1 | a);
    t = (t + imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A standard normal draw (Box–Muller). */
function normal(rng: Rng): number {
  return Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng());
}

/**
 * Draws items by rank with Zipf's law: the item of rank k (from 1) with weight 1 / k^s. Walker's alias
 * method makes a draw O(1) from one uniform number, which matters at millions of draws per second.
 */
class Zipf<T> {
  private readonly threshold: Float64Array;
  private readonly alias: Uint32Array;

  constructor(
    readonly items: readonly T[],
    s = 1,
  ) {
    const n = items.length;
    if (n === 0) throw new Error('Zipf needs at least one item');
    const weights = Array.from({ length: n }, (_, k) => 1 / (k + 1) ** s);
    const total = weights.reduce((a, b) => a + b, 0);
    const scaled = weights.map((w) => (w * n) / total);
    this.threshold = new Float64Array(n).fill(1);
    this.alias = new Uint32Array(n).map((_, i) => i);
    const small = scaled.flatMap((p, i) => (p < 1 ? [i] : []));
    const large = scaled.flatMap((p, i) => (p >= 1 ? [i] : []));
    while (small.length > 0 && large.length > 0) {
      const lo = small.pop()!;
      const hi = large.at(-1)!;
      this.threshold[lo] = scaled[lo]!;
      this.alias[lo] = hi;
      scaled[hi] = scaled[hi]! + scaled[lo]! - 1;
      if (scaled[hi]! < 1) small.push(large.pop()!);
    }
  }

  pick(rng: Rng): T {
    const x = rng() * this.threshold.length;
    const i = floor(x);
    return this.items[x - i < this.threshold[i]! ? i : this.alias[i]!]!;
  }
}

const pickOne = <T>(items: readonly T[], rng: Rng): T => items[floor(rng() * items.length)]!;

// ---------------------------------------------------------------------------------------------------------
// Words and templates, compiled once from VOCABULARY (corpus-vocabulary.ts) on first use.

interface Verb {
  base: string;
  past: string;
  ing: string;
  s: string;
}

const SLOTS = ['n', 'ns', 'd', 'ds', 'cn', 'v', 'vd', 'vg', 'vs', 'a', 'p', 'c', 't', 'w', 'city', 'period', 'num', 'amt', 'pct', 'id', 'ver', 'code'] as const;
type Slot = (typeof SLOTS)[number];
/** A template: literal text and slot numbers (indexes into SLOTS), in order. */
type Template = (string | number)[];

const plural = (noun: string) =>
  /(s|x|z|ch|sh)$/.test(noun) ? `${noun}es` : /[^aeiou]y$/.test(noun) ? `${noun.slice(0, -1)}ies` : `${noun}s`;

/** "base" or "base:past" or "base:past:ing"; what is left out follows the regular rules. */
function verb(spec: string): Verb {
  const [base, past, ing] = spec.split(':') as [string, string?, string?];
  const regularPast = base.endsWith('e') ? `${base}d` : /[^aeiou]y$/.test(base) ? `${base.slice(0, -1)}ied` : `${base}ed`;
  const regularIng = base.endsWith('ie') ? `${base.slice(0, -2)}ying` : /[^e]e$/.test(base) ? `${base.slice(0, -1)}ing` : `${base}ing`;
  return { base, past: past ?? regularPast, ing: ing ?? regularIng, s: plural(base) };
}

/** "noun" or "noun:plural". */
function noun(spec: string): [string, string] {
  const [singular, irregular] = spec.split(':') as [string, string?];
  return [singular, irregular ?? plural(singular)];
}

const words = (list: string) => [...new Set(list.trim().split(/\s+/))];
/** Noun and verb specs, each word once: the first spec of a word wins, as it holds any irregular form. */
function specs(list: string): string[] {
  const seen = new Set<string>();
  return words(list).filter((spec) => {
    const word = spec.split(':')[0]!;
    if (seen.has(word)) return false;
    seen.add(word);
    return true;
  });
}
/** Lists whose entries hold spaces ("dark mode") are written one entry per line, or separated by commas. */
const entries = (list: string) => [...new Set(list.split(/[,\n]/).map((s) => s.trim()).filter((s) => s !== ''))];

function compile(template: string): Template {
  const parts: Template = [];
  for (const [i, piece] of template.split(/\{(\w+)\}/).entries()) {
    if (i % 2 === 0) {
      if (piece !== '') parts.push(piece);
      continue;
    }
    const slot = SLOTS.indexOf(piece as Slot);
    if (slot < 0) throw new Error(`unknown slot {${piece}} in "${template}"`);
    parts.push(slot);
  }
  return parts;
}

interface DomainWords {
  nouns: Zipf<[string, string]>;
  compounds: Zipf<string>;
  roles: string[];
}

interface Compiled {
  nouns: Zipf<[string, string]>;
  compounds: Zipf<string>;
  verbs: Zipf<Verb>;
  adjectives: Zipf<string>;
  persons: Zipf<string>;
  tools: Zipf<string>;
  cities: Zipf<string>;
  when: Zipf<string>;
  syllables: string[];
  clientFirst: string[];
  clientSecond: string[];
  domains: Record<Domain, DomainWords>;
  titles: Record<RecordType, Template[]>;
  bodies: Record<RecordType, Template[]>;
  generic: Template[];
  tails: Template[];
  metadataSources: string[];
  types: Zipf<RecordType>;
}

let compiled: Compiled | undefined;

function vocabulary(): Compiled {
  if (compiled) return compiled;
  const v = VOCABULARY;
  const templates = (list: readonly string[]) => list.map(compile);
  const perType = (lists: Record<RecordType, readonly string[]>) =>
    Object.fromEntries(Object.entries(lists).map(([type, list]) => [type, templates(list)])) as Record<RecordType, Template[]>;
  compiled = {
    nouns: new Zipf(specs(v.nouns).map(noun)),
    compounds: new Zipf(entries(v.compounds)),
    verbs: new Zipf(specs(v.verbs).map(verb)),
    adjectives: new Zipf(words(v.adjectives)),
    persons: new Zipf(words(v.persons)),
    tools: new Zipf(words(v.tools)),
    cities: new Zipf(entries(v.cities)),
    when: new Zipf(entries(v.when)),
    syllables: words(v.syllables),
    clientFirst: words(v.clientFirst),
    clientSecond: words(v.clientSecond),
    domains: Object.fromEntries(
      Object.entries(v.domains).map(([domain, d]) => [
        domain,
        { nouns: new Zipf(specs(d.nouns).map(noun)), compounds: new Zipf(entries(d.compounds)), roles: words(d.roles) },
      ]),
    ) as Record<Domain, DomainWords>,
    titles: perType(v.titles),
    bodies: perType(v.bodies),
    generic: templates(v.generic),
    tails: templates(v.tails),
    metadataSources: words(v.metadataSources),
    // Notes of fact and conversation dominate what agents write; signals are the rarest.
    types: new Zipf<RecordType>(['fact', 'exchange', 'open_item', 'decision', 'deliverable', 'signal'], 0.7),
  };
  return compiled;
}

// ---------------------------------------------------------------------------------------------------------
// The generator.

/** What one record's slots draw from: its tenant's words, and its own client when it has one. */
interface Context {
  rng: Rng;
  words: Compiled;
  domain: DomainWords;
  clients: Zipf<string>;
  client: string | null;
}

const PERIODS = ['week', 'month', 'quarter', 'year', 'sprint', 'day'];
const ID_PREFIXES = ['#', 'INC-', 'PO-', 'TKT-', 'CASE-'];
const ID_TEMPLATE = compile('{id}');

/** 12345 as "12,345" (toLocaleString is far slower, and this runs millions of times). */
function thousands(n: number): string {
  const digits = String(n);
  let out = '';
  for (let i = 0; i < digits.length; i++) out += (i > 0 && (digits.length - i) % 3 === 0 ? ',' : '') + digits[i];
  return out;
}

function slotValue(slot: number, ctx: Context): string {
  const { rng, words } = ctx;
  switch (SLOTS[slot]) {
    case 'n':
      return (rng() < 0.3 ? ctx.domain.nouns : words.nouns).pick(rng)[0];
    case 'ns':
      return (rng() < 0.3 ? ctx.domain.nouns : words.nouns).pick(rng)[1];
    case 'd':
      return ctx.domain.nouns.pick(rng)[0];
    case 'ds':
      return ctx.domain.nouns.pick(rng)[1];
    case 'cn':
      return (rng() < 0.5 ? ctx.domain.compounds : words.compounds).pick(rng);
    case 'v':
      return words.verbs.pick(rng).base;
    case 'vd':
      return words.verbs.pick(rng).past;
    case 'vg':
      return words.verbs.pick(rng).ing;
    case 'vs':
      return words.verbs.pick(rng).s;
    case 'a':
      return words.adjectives.pick(rng);
    case 'p':
      return words.persons.pick(rng);
    case 'c':
      return ctx.client ?? ctx.clients.pick(rng);
    case 't':
      return words.tools.pick(rng);
    case 'w':
      return words.when.pick(rng);
    case 'city':
      return words.cities.pick(rng);
    case 'period':
      return pickOne(PERIODS, rng);
    case 'num':
      return String(2 + Math.floor(rng() * rng() * 60));
    case 'amt': {
      const amount = Math.round(Math.exp(3 + rng() * 8));
      return rng() < 0.8 ? `$${thousands(amount)}` : `€${amount}`;
    }
    case 'pct':
      return `${1 + Math.floor(rng() * 60)}%`;
    case 'id':
      return `${pickOne(ID_PREFIXES, rng)}${10_000 + Math.floor(rng() * 90_000)}`;
    case 'ver':
      return `v${1 + Math.floor(rng() * 4)}.${Math.floor(rng() * 13)}`;
    case 'code': {
      // Made-up names: 40^3 combinations, so most occur a handful of times even in a million records.
      const s = words.syllables;
      const name = pickOne(s, rng) + pickOne(s, rng) + pickOne(s, rng);
      return name.charAt(0).toUpperCase() + name.slice(1);
    }
    default:
      throw new Error(`unknown slot ${slot}`);
  }
}

function fill(template: Template, ctx: Context): string {
  let out = '';
  for (const part of template) out += typeof part === 'string' ? part : slotValue(part, ctx);
  return out;
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const wordCount = (s: string) => {
  let n = 1;
  for (let i = s.indexOf(' '); i >= 0; i = s.indexOf(' ', i + 1)) n++;
  return n;
};

function makeTitle(type: RecordType, ctx: Context): string {
  const { rng, words } = ctx;
  const target = clamp(Math.round(Math.exp(Math.log(9) + 0.4 * normal(rng))), TITLE_WORDS.min, TITLE_WORDS.max);
  let title = fill(pickOne(words.titles[type], rng), ctx);
  let count = wordCount(title);
  // Whole tails only, so a title never stops mid-clause; it ends short of the target rather than over it.
  while (count < target) {
    const tail = fill(pickOne(words.tails, rng), ctx);
    const more = wordCount(tail) - 1;
    if (count + more > TITLE_WORDS.max || (count + more > target && count >= TITLE_WORDS.min)) break;
    title += tail;
    count += more;
  }
  return capitalize(title);
}

/** Sentences are added whole while they fit the drawn length; a body is never cut mid-sentence. */
function makeBody(type: RecordType, ctx: Context): string {
  const { rng, words } = ctx;
  const target = clamp(Math.round(Math.exp(Math.log(300) + 1.0 * normal(rng))), BODY_BYTES.min, BODY_BYTES.max);
  let body = capitalize(fill(pickOne(words.bodies[type], rng), ctx));
  for (;;) {
    const sentence = capitalize(fill(rng() < 0.45 ? pickOne(words.bodies[type], rng) : pickOne(words.generic, rng), ctx));
    if (body.length + 1 + sentence.length > target && body.length >= BODY_BYTES.min) break;
    body += (rng() < 0.08 ? '\n\n' : ' ') + sentence;
  }
  // Names and prices carry a few multi-byte characters, and the limit is in bytes: drop whole sentences.
  while (Buffer.byteLength(body, 'utf8') > BODY_BYTES.max) {
    const end = body.lastIndexOf('. ', body.length - 2);
    body = end > 0 ? body.slice(0, end + 1) : body.slice(0, BODY_BYTES.max / 4);
  }
  return body;
}

function makeMetadata(ctx: Context): Record<string, unknown> {
  const { rng, words } = ctx;
  const metadata: Record<string, unknown> = { source: words.metadataSources[Math.floor(rng() * rng() * words.metadataSources.length)]! };
  if (rng() < 0.6) metadata.session_id = `s_${Math.floor(rng() * 2 ** 32).toString(16).padStart(8, '0')}`;
  if (rng() < 0.4) metadata.turn = 1 + Math.floor(rng() * 40);
  if (rng() < 0.3) metadata.confidence = Math.round(rng() * 100) / 100;
  if (rng() < 0.3) metadata.tags = Array.from({ length: 1 + Math.floor(rng() * 3) }, () => ctx.domain.nouns.pick(rng)[0]);
  if (rng() < 0.1) metadata.links = { ticket: fill(ID_TEMPLATE, ctx), url: `https://example.com/r/${Math.floor(rng() * 1e6)}` };
  return metadata;
}

interface TenantState {
  spec: TenantSpec;
  domain: DomainWords;
  agents: Zipf<string>;
  clients: Zipf<string>;
}

function tenantStates(options: CorpusOptions, words: Compiled): TenantState[] {
  return tenantsFor(options).map((spec, t) => {
    const domain = words.domains[spec.domain];
    const agents = Array.from({ length: spec.agents }, (_, i) => `${domain.roles[i % domain.roles.length]}-${Math.floor(i / domain.roles.length) + 1}`);
    // Each tenant walks the name grid from its own offset, so tenants mostly have clients of their own.
    const { clientFirst: first, clientSecond: second } = words;
    const clients = Array.from({ length: spec.clients }, (_, i) => {
      const k = i * 7 + t * 131;
      return `${first[k % first.length]} ${second[Math.floor(k / first.length + t) % second.length]}`;
    });
    return { spec, domain, agents: new Zipf(agents), clients: new Zipf(clients, 0.9) };
  });
}

/** The corpus, one record at a time: deterministic for (records, seed), tenants interleaved by their shares. */
export function* generateCorpus(options: CorpusOptions): Generator<CorpusRecord> {
  const words = vocabulary();
  const rng = mulberry32(options.seed ?? DEFAULT_SEED);
  const tenants = tenantStates(options, words);
  const cumulative: number[] = [];
  tenants.reduce((sum, t) => (cumulative.push(sum + t.spec.share), sum + t.spec.share), 0);

  for (let i = 0; i < options.records; i++) {
    const u = rng() * cumulative.at(-1)!;
    let t = 0;
    while (t < tenants.length - 1 && u >= cumulative[t]!) t++;
    const tenant = tenants[t]!;
    const type = words.types.pick(rng);
    const clientDraw = rng();
    const ctx: Context = { rng, words, domain: tenant.domain, clients: tenant.clients, client: clientDraw < 0.55 ? tenant.clients.pick(rng) : null };
    const record: RecordInput = { agent_id: tenant.agents.pick(rng), type, title: makeTitle(type, ctx), body: makeBody(type, ctx) };
    if (ctx.client !== null) record.client = ctx.client;
    else if (clientDraw < 0.58) record.client = null; // some callers send an explicit null
    if (rng() < 0.35) record.metadata = makeMetadata(ctx);
    yield { tenant: tenant.spec.name, record };
  }
}

// ---------------------------------------------------------------------------------------------------------
// The search workload.

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
