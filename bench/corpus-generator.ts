/**
 * The corpus generator: records one at a time from one seeded stream, each of its tenant's domain, with
 * titles and bodies filled from the templates and metadata as agents send it.
 */
import type { RecordInput, RecordType } from '../shared/domain/record.js';
import { clamp, mulberry32, normal, pickOne, Zipf, type Rng } from './corpus-random.js';
import { DEFAULT_SEED, tenantsFor, type CorpusOptions, type TenantSpec } from './corpus-tenants.js';
import { compile, SLOTS, vocabulary, type Compiled, type DomainWords, type Template } from './corpus-words.js';

/** One record of the corpus, as its tenant would send it. */
export interface CorpusRecord {
  tenant: string;
  record: RecordInput;
}

/** The body sizes the generator keeps to (UTF-8 bytes). */
export const BODY_BYTES = { min: 50, max: 8192 } as const;
/** The title lengths the generator keeps to (words separated by single spaces). */
export const TITLE_WORDS = { min: 5, max: 25 } as const;

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
