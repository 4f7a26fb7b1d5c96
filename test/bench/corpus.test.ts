import { describe, expect, test } from '@jest/globals';
import { generateCorpus, queryWorkload, QUERY_KINDS, tenantsFor, type CorpusRecord } from '../../bench/corpus.js';
import { RECORD_TYPES } from '../../shared/domain/record.js';
import { parseQuery } from '../../shared/domain/query-parse.js';
import { recallQuerySchema, recordInputSchema } from '../../shared/domain/schemas.js';

const RECORDS = 20_000;
const SEED = 11;

const started = performance.now();
const corpus: CorpusRecord[] = [...generateCorpus({ records: RECORDS, seed: SEED })];
const seconds = (performance.now() - started) / 1000;
console.log(`corpus: ${RECORDS} records in ${seconds.toFixed(2)} s (${Math.round(RECORDS / seconds)} records/s)`);

/** The words of a text as the service splits them, lower-cased. */
const tokens = (text: string) => text.toLowerCase().split(/[^\p{L}\p{N}\p{M}]+/u).filter((w) => w !== '');
const textOf = ({ record }: CorpusRecord) => `${record.title}\n${record.body}`.toLowerCase();
const texts = corpus.map(textOf);
const words = texts.map(tokens);

describe('the benchmark corpus', () => {
  test('is deterministic for a seed, and differs with another seed', () => {
    const first = (seed: number) => {
      const out: CorpusRecord[] = [];
      for (const r of generateCorpus({ records: RECORDS, seed })) if (out.push(r) === 1000) break;
      return out;
    };
    expect(first(SEED)).toEqual(corpus.slice(0, 1000));
    const other = first(SEED + 1);
    expect(other.filter((r, i) => r.record.title === corpus[i]!.record.title).length).toBeLessThan(10);
  });

  test('every sampled record is a valid write', () => {
    for (const { record } of corpus.filter((_, i) => i % 10 === 0)) {
      const parsed = recordInputSchema.safeParse(record);
      if (!parsed.success) throw new Error(`${JSON.stringify(record)}: ${parsed.error.message}`);
    }
  });

  test('titles have 5 to 25 words and bodies 50 to 8192 bytes', () => {
    const titleWords = corpus.map(({ record }) => record.title.trim().split(/\s+/).length);
    const bodyBytes = corpus.map(({ record }) => Buffer.byteLength(record.body, 'utf8'));
    expect(Math.min(...titleWords)).toBeGreaterThanOrEqual(5);
    expect(Math.max(...titleWords)).toBeLessThanOrEqual(25);
    expect(Math.min(...bodyBytes)).toBeGreaterThanOrEqual(50);
    expect(Math.max(...bodyBytes)).toBeLessThanOrEqual(8192);
    // Spread over the range, not bunched at one length.
    expect(new Set(titleWords).size).toBeGreaterThan(12);
    expect(bodyBytes.filter((b) => b > 2000).length).toBeGreaterThan(RECORDS / 100);
  });

  test('has every type, clients and metadata on some records, and many agents', () => {
    expect(new Set(corpus.map(({ record }) => record.type))).toEqual(new Set(RECORD_TYPES));
    const withClient = corpus.filter(({ record }) => typeof record.client === 'string').length / RECORDS;
    const withMetadata = corpus.filter(({ record }) => record.metadata != null).length / RECORDS;
    expect(withClient).toBeGreaterThan(0.3);
    expect(withClient).toBeLessThan(0.8);
    expect(withMetadata).toBeGreaterThan(0.2);
    expect(withMetadata).toBeLessThan(0.5);
    expect(new Set(corpus.map(({ tenant, record }) => `${tenant}/${record.agent_id}`)).size).toBeGreaterThan(50);
  });

  test('splits the records over the tenants by their shares', () => {
    const specs = tenantsFor({ records: RECORDS });
    expect(specs.reduce((sum, t) => sum + t.share, 0)).toBeCloseTo(1, 9);
    expect(Math.min(...specs.map((t) => t.share))).toBeLessThan(0.01);
    for (const { name, share } of specs) {
      const observed = corpus.filter((r) => r.tenant === name).length / RECORDS;
      // Five standard deviations of a binomial share: never off by chance, and the corpus is fixed anyway.
      expect(Math.abs(observed - share)).toBeLessThan(5 * Math.sqrt((share * (1 - share)) / RECORDS));
    }
  });

  test('word frequencies follow a Zipf-like law', () => {
    const counts = new Map<string, number>();
    for (const ws of words) for (const w of ws) counts.set(w, (counts.get(w) ?? 0) + 1);
    const ranked = [...counts.values()].sort((a, b) => b - a);
    expect(counts.size).toBeGreaterThan(3000);
    // The slope of log(frequency) against log(rank), from rank 10 to rank 1000: 1 for Zipf's law with s = 1.
    const slope = Math.log(ranked[9]! / ranked[999]!) / Math.log(100);
    expect(slope).toBeGreaterThan(0.7);
    expect(slope).toBeLessThan(1.4);
  });
});

describe('the search workload', () => {
  const PER_KIND = 30;
  const SINCE = '2026-05-20';
  const workload = queryWorkload({ records: RECORDS, seed: SEED }, PER_KIND, { since: SINCE });
  /** Per tenant: its records' texts, and in how many of them each word occurs. */
  const byTenant = new Map<string, { texts: string[]; records: Map<string, number> }>();
  corpus.forEach(({ tenant }, i) => {
    let t = byTenant.get(tenant);
    if (!t) byTenant.set(tenant, (t = { texts: [], records: new Map() }));
    t.texts.push(texts[i]!);
    for (const w of new Set(words[i])) t.records.set(w, (t.records.get(w) ?? 0) + 1);
  });

  test('is deterministic, valid and has every kind for every tenant', () => {
    expect(queryWorkload({ records: RECORDS, seed: SEED }, PER_KIND, { since: SINCE })).toEqual(workload);
    expect(workload).toHaveLength(PER_KIND * QUERY_KINDS.length);
    for (const kind of QUERY_KINDS) {
      const ofKind = workload.filter((q) => q.kind === kind);
      expect(ofKind).toHaveLength(PER_KIND);
      expect(new Set(ofKind.map((q) => q.tenant))).toEqual(new Set(tenantsFor({ records: RECORDS }).map((t) => t.name)));
    }
    for (const { kind, query } of workload) {
      expect(recallQuerySchema.safeParse(query).success).toBe(true);
      if (kind === 'no-q') expect(query.q).toBeUndefined();
      else expect(query.q?.trim()).toBeTruthy();
      if (kind === 'filter-agent') expect(query.agent_id).toBeTruthy();
      if (kind === 'filter-type') expect(query.type).toBeTruthy();
      if (kind === 'filter-since') expect(query.since).toBe(SINCE);
    }
    expect(workload.filter((q) => q.query.limit === 20).length).toBeGreaterThan(workload.length / 2);
  });

  test('every one-word, phrase and rare-words query matches a record of its tenant', () => {
    for (const { kind, tenant, query } of workload) {
      const { records, texts } = byTenant.get(tenant)!;
      const q = query.q ?? '';
      if (kind === 'one-word' || kind === 'rare-words') {
        for (const w of q.split(' ')) expect({ tenant, word: w, found: records.has(w) }).toEqual({ tenant, word: w, found: true });
      }
      if (kind === 'phrase') {
        const phrase = /"([^"]+)"/.exec(q)?.[1];
        expect(phrase).toBeDefined();
        expect({ tenant, phrase, found: texts.some((t) => t.includes(phrase!)) }).toEqual({ tenant, phrase, found: true });
      }
    }
  });

  test('a question is a whole question, with words of its tenant', () => {
    const questions = workload.filter((q) => q.kind === 'question');
    for (const { tenant, query } of questions) {
      expect(query.q).toMatch(/^(when|what|why|how|who|did|where|is) .+\?$/i);
      const content = parseQuery(query.q)!.terms;
      expect(content.length).toBeGreaterThan(0);
      // The template's own words ("outcome", "anyone") need not occur; the nouns, verbs and names put in do.
      expect({ q: query.q, found: content.some((w) => byTenant.get(tenant)!.records.has(w)) }).toEqual({ q: query.q, found: true });
    }
  });

  test('rare words are rare and common words are common in their tenant', () => {
    const frequency = (tenant: string, word: string) => byTenant.get(tenant)!.records.get(word) ?? 0;
    const rare = workload.filter((q) => q.kind === 'rare-words' && q.tenant === 'northwind-support');
    const common = workload.filter((q) => q.kind === 'common-words' && q.tenant === 'northwind-support');
    const rareHits = rare.flatMap((q) => q.query.q!.split(' ').map((w) => frequency(q.tenant, w)));
    const commonHits = common.flatMap((q) => q.query.q!.split(' ').map((w) => frequency(q.tenant, w)));
    expect(Math.max(...rareHits)).toBeLessThan(20);
    expect(Math.min(...commonHits)).toBeGreaterThan(200);
  });
});
