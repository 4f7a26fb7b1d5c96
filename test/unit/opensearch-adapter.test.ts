import type { Client } from '@opensearch-project/opensearch';
import { RECORDS_ANALYZER, recordsAnalysis } from '../../shared/adapters/aws/opensearch/analysis.js';
import { CLITIC_SOURCE, TOKEN_SOURCE } from '../../shared/text/tokens.js';
import { openSearchClient } from '../../shared/adapters/aws/opensearch/client.js';
import { OpenSearchDocumentIndex } from '../../shared/adapters/aws/opensearch/document-index.js';
import {
  putRecordsIndexTemplate,
  RECORDS_SIMILARITY,
  RECORDS_TEMPLATE_VERSION,
  recordDocument,
  recordsIndexTemplate,
} from '../../shared/adapters/aws/opensearch/mapping.js';
import { buildSearchRequest } from '../../shared/adapters/aws/opensearch/query.js';
import { bestScoreFrom } from '../../shared/adapters/aws/opensearch/best-score.js';
import { HELD_SHARE_POWER } from '../../shared/search/best.js';
import { OpenSearchSearchIndex } from '../../shared/adapters/aws/opensearch/search-index.js';
import { AppError } from '../../shared/domain/errors.js';
import { parseQuery } from '../../shared/domain/query-parse.js';
import { rankFromScore } from '../../shared/domain/rank.js';
import { newRecord, type StoredRecord } from '../../shared/domain/record.js';
import { RANKING } from '../../shared/domain/rank.js';
import { FakeOpenSearch, type Reply } from '../support/fake-opensearch.js';

const INDEX = 'memory-records';
const TENANT = '0193a000-0000-7000-8000-00000000000a';
const OTHER = '0193a000-0000-7000-8000-00000000000b';

function record(tenantId: string, at: string, extra: Partial<StoredRecord> = {}): StoredRecord {
  return {
    ...newRecord(tenantId, { agent_id: 'support-bot', type: 'fact', title: 'A title', body: 'A body' }, new Date(at)),
    ...extra,
  };
}

let fake: FakeOpenSearch;
let client: Client;

beforeEach(async () => {
  fake = new FakeOpenSearch();
  client = openSearchClient({ node: await fake.start(), sigv4: false });
});

afterEach(async () => {
  await client.close();
  await fake.stop();
});

describe('OpenSearchSearchIndex', () => {
  const first = record(TENANT, '2026-11-10T12:00:00.001Z', {
    title: 'The ﬁle server keeps running',
    body: 'Ｆｕｌｌ-width text, kept as sent.  ',
    client: 'acme',
    metadata: { source: 'chat', nested: { list: [1, 'two', null, 2.5, { deep: true }] }, empty: {} },
    classification: { type: 'decision', confidence: 0.8, model: 'keyword-baseline-v1', classified_at: '2026-11-10T12:00:02.000Z' },
  });
  const second = record(TENANT, '2026-11-10T12:00:00.002Z');

  const hitsReply = (hits: { record: StoredRecord; score: number | null }[]): Reply => ({
    status: 200,
    body: {
      took: 3,
      timed_out: false,
      _shards: { total: 1, successful: 1, skipped: 0, failed: 0 },
      hits: {
        max_score: hits[0]?.score ?? null,
        hits: hits.map(({ record: r, score }) => ({
          _index: INDEX,
          _id: r.id,
          _score: score,
          _routing: r.tenant_id,
          _source: { record: recordDocument(r).record },
          sort: score === null ? [Date.parse(r.created_at), r.id] : [score, Date.parse(r.created_at), r.id],
        })),
      },
    },
  });

  /**
   * The `_mtermvectors` answer for one word the shard's 10 records hold once each in title and body: the
   * bound is (k1 + 1) · (TITLE_BOOST · idf + idf), idf = ln(1 + 9.5 / 1.5).
   */
  const vectors = { docs: [{ _index: INDEX, _id: '', found: true, term_vectors: Object.fromEntries(['title', 'body'].map((f) => [f, { field_statistics: { doc_count: 10, sum_doc_freq: 30, sum_ttf: 30 }, terms: { run: { term_freq: 1, doc_freq: 1 } } }])) }] };
  const IDF = Math.log(1 + 9.5 / 1.5);
  const BEST = RANKING.titleWeight * 1 * (RANKING.k1 + 1) * IDF + 1 * 1 * (RANKING.k1 + 1) * IDF;
  /** Answers the bound's request with `vectors`, and every other request with `reply`. */
  const withVectors = (reply: (request: { path: string }) => Reply) => (request: { path: string }) =>
    request.path.endsWith('/_mtermvectors') ? { status: 200, body: vectors } : reply(request);
  const searchRequest = () => fake.received.find((r) => r.path.endsWith('/_search'))!;

  test('a text search is one routed request to the index, and hits come back exact with their rank', async () => {
    fake.reply = withVectors(() => hitsReply([{ record: first, score: 9 }, { record: second, score: 3 }]));
    const query = { text: parseQuery('running "file server"'), client: 'acme', limit: 5 };
    const hits = await new OpenSearchSearchIndex(client, INDEX).search(TENANT, query);

    // The search, and beside it the request for the bound its ranks divide by.
    expect(fake.received.map((r) => r.path).sort()).toEqual([`/${INDEX}/_mtermvectors`, `/${INDEX}/_search`]);
    const request = searchRequest();
    expect(request).toMatchObject({ method: 'POST', path: `/${INDEX}/_search` });
    expect(request!.query).toEqual({ routing: TENANT });
    expect(request!.body).toEqual(buildSearchRequest(TENANT, query)!.body);
    expect(request!.body).toMatchObject({ size: 5, _source: ['record'] });

    expect(hits).toEqual([
      { ...first, rank: 9 / BEST },
      { ...second, rank: 3 / BEST },
    ]);
    expect(hits[0]!.rank).toBe(rankFromScore(9, BEST));
    expect(hits[0]!.title).toBe('The ﬁle server keeps running');
    expect(hits[0]!.body).toBe('Ｆｕｌｌ-width text, kept as sent.  ');
    expect(JSON.stringify(hits[0]!.metadata)).toBe(JSON.stringify(first.metadata));
  });

  test('the request weighs title matches, words and phrases alike, by RANKING.titleWeight, and body matches by 1', async () => {
    fake.reply = withVectors(() => hitsReply([]));
    await new OpenSearchSearchIndex(client, INDEX).search(TENANT, { text: parseQuery('deploys "dark mode"'), limit: 3 });
    const { should } = (searchRequest().body as { query: { bool: { should: unknown[] } } }).query.bool;
    expect(should).toEqual([
      { match: { title: { query: 'deploys', boost: RANKING.titleWeight } } },
      { match: { body: { query: 'deploys' } } },
      { match_phrase: { title: { query: 'dark mode', boost: RANKING.titleWeight } } },
      { match_phrase: { body: { query: 'dark mode' } } },
    ]);
  });

  test('the rank is rankFromScore(_score, best), the formula of the embedded engine, whatever the score', async () => {
    const scores = [123.4, 10, 2.5, 0.01];
    fake.reply = withVectors(() => hitsReply(scores.map((score, i) => ({ record: record(TENANT, `2026-11-10T12:00:00.0${10 + i}Z`), score }))));
    const hits = await new OpenSearchSearchIndex(client, INDEX).search(TENANT, { text: parseQuery('anything'), limit: 4 });
    expect(hits.map((h) => h.rank)).toEqual(scores.map((score) => rankFromScore(score, BEST)));
  });

  test('the bound is asked of the tenant\'s shard with artificial documents, the words in one, each phrase and each pair of adjacent words in another', async () => {
    fake.reply = withVectors(() => hitsReply([]));
    await new OpenSearchSearchIndex(client, INDEX).search(TENANT, { text: parseQuery('running "file server" jobs'), limit: 3 });
    const asked = fake.received.find((r) => r.path.endsWith('/_mtermvectors'))!;
    const docs = (asked.body as { docs: { doc: unknown; routing: string; term_statistics: boolean; fields: string[] }[] }).docs;
    expect(docs.map((d) => d.doc)).toEqual(['running jobs', 'file server', 'running jobs'].map((words) => ({ title: words, body: words })));
    expect(docs.every((d) => d.routing === TENANT && d.term_statistics && d.fields.join() === 'title,body')).toBe(true);
  });

  test("a word the shard holds in no record divides the bound by the square of the share of the query's weight it holds, as the engine's", () => {
    const field = (terms: Record<string, { term_freq: number; doc_freq?: number }>) => ({ field_statistics: { doc_count: 10, sum_doc_freq: 30, sum_ttf: 30 }, terms });
    const terms = { run: { term_freq: 1, doc_freq: 1 }, zebra: { term_freq: 1 } };
    const response = { docs: [{ _index: INDEX, _id: '', found: true, term_vectors: { title: field(terms), body: field(terms) } }] } as unknown as Parameters<typeof bestScoreFrom>[0];
    const run = Math.log(1 + 9.5 / 1.5);
    const zebra = Math.log(1 + 10.5 / 0.5);
    // One word alone: no pair. Both fields of both words, then divided by (run / (run + zebra))².
    const plain = (RANKING.titleWeight + 1) * (RANKING.k1 + 1) * (run + zebra);
    expect(bestScoreFrom(response, parseQuery('run')!)).toBeCloseTo(plain / (run / (run + zebra)) ** HELD_SHARE_POWER, 9);
  });

  test('min_rank leaves out the hits ranked below it, and may leave nothing', async () => {
    const scores = [0.8 * BEST, 0.3 * BEST, 0.05 * BEST];
    fake.reply = withVectors(() => hitsReply(scores.map((score, i) => ({ record: record(TENANT, `2026-11-10T12:00:00.0${10 + i}Z`), score }))));
    const search = new OpenSearchSearchIndex(client, INDEX);
    expect((await search.search(TENANT, { text: parseQuery('run'), min_rank: 0.3, limit: 5 })).map((h) => h.rank)).toEqual([0.8, 0.3].map((r) => rankFromScore(r * BEST, BEST)));
    expect(await search.search(TENANT, { text: parseQuery('run'), min_rank: 0.9, limit: 5 })).toEqual([]);
    expect(await search.search(TENANT, { text: parseQuery('run'), min_rank: 0, limit: 5 })).toHaveLength(3);
  });

  test('without text the hits have rank 0, whatever _score says', async () => {
    fake.reply = withVectors(() => hitsReply([{ record: second, score: null }, { record: first, score: null }]));
    const hits = await new OpenSearchSearchIndex(client, INDEX).search(TENANT, { text: null, limit: 20 });
    expect(fake.received[0]!.body).toEqual({
      size: 20,
      track_total_hits: false,
      _source: ['record'],
      query: { bool: { filter: [{ term: { tenant_id: TENANT } }, { bool: { must_not: [{ exists: { field: 'superseded_by' } }] } }] } },
      sort: [{ created_at: 'desc' }, { id: 'desc' }],
    });
    expect(hits).toEqual([
      { ...second, rank: 0 },
      { ...first, rank: 0 },
    ]);
  });

  test('include_superseded drops the filter on superseded_by, and a superseded, updated hit comes back with its version and both fields', async () => {
    const updated = { ...second, title: 'New title', version: 4, updated_at: '2026-11-10T12:30:00.000Z', superseded_by: first.id };
    fake.reply = withVectors(() => hitsReply([{ record: updated, score: 3 }]));
    const hits = await new OpenSearchSearchIndex(client, INDEX).search(TENANT, { text: parseQuery('title'), include_superseded: true, limit: 20 });
    expect((searchRequest().body as { query: { bool: { filter: unknown[] } } }).query.bool.filter).toEqual([{ term: { tenant_id: TENANT } }]);
    expect(hits).toEqual([{ ...updated, rank: rankFromScore(3, BEST) }]);
  });

  test('a document indexed before records had versions reads as version 1, never updated, current', async () => {
    const { version: _v, updated_at: _u, superseded_by: _s, ...legacy } = recordDocument(second).record;
    fake.reply = withVectors(() => ({
      status: 200,
      body: { took: 1, timed_out: false, hits: { max_score: 1, hits: [{ _index: INDEX, _id: second.id, _score: 1, _source: { record: legacy } }] } },
    }));
    expect(await new OpenSearchSearchIndex(client, INDEX).search(TENANT, { text: parseQuery('title'), limit: 20 })).toEqual([{ ...second, rank: rankFromScore(1, BEST) }]);
  });

  test('text of only stop words or punctuation returns nothing, without a request', async () => {
    const search = new OpenSearchSearchIndex(client, INDEX);
    expect(await search.search(TENANT, { text: parseQuery('the of *:()'), limit: 20 })).toEqual([]);
    expect(fake.received).toEqual([]);
  });

  test('metadata of any shape round-trips, even keys the client would refuse in a response', async () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 1500; i++) deep = { d: deep };
    const metadata = JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}}') as Record<string, unknown>;
    metadata.deep = deep;
    const odd = record(TENANT, '2026-11-10T12:00:00.003Z', { metadata });
    fake.reply = withVectors(() => hitsReply([{ record: odd, score: 1 }]));
    const [hit] = await new OpenSearchSearchIndex(client, INDEX).search(TENANT, { text: parseQuery('title'), limit: 1 });
    expect(JSON.stringify(hit!.metadata)).toBe(JSON.stringify(metadata));
    expect(Object.keys(hit!.metadata!)).toEqual(['__proto__', 'constructor', 'deep']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test("a hit holding another tenant's record fails the search instead of showing it", async () => {
    fake.reply = withVectors(() => hitsReply([{ record: record(OTHER, '2026-11-10T12:00:00.004Z'), score: 1 }]));
    await expect(new OpenSearchSearchIndex(client, INDEX).search(TENANT, { text: null, limit: 20 })).rejects.toThrow(
      "holds another tenant's record",
    );
  });

  test('a cluster that does not answer within the deadline fails the search with 503 search_timeout, after one request', async () => {
    fake.reply = withVectors(() => ({ ...hitsReply([]), delayMs: 2000 }));
    const started = Date.now();
    const error = await new OpenSearchSearchIndex(client, INDEX, { timeoutMs: 300 }).search(TENANT, { text: null, limit: 20 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'search_timeout', status: 503, retryAfter: 1, message: 'The search did not finish within 0.3 s; try again in a moment' });
    expect(Date.now() - started).toBeLessThan(1500);
    // No retry: a second attempt would double the wait past the query Lambda's own timeout.
    expect(fake.received.filter((r) => r.path.endsWith('/_search'))).toHaveLength(1);
  });

  test('a failed search request fails the search', async () => {
    fake.reply = () => ({ status: 404, body: { error: { type: 'index_not_found_exception', reason: 'no such index [memory-records]' }, status: 404 } });
    await expect(new OpenSearchSearchIndex(client, INDEX).search(TENANT, { text: null, limit: 20 })).rejects.toThrow(
      'index_not_found_exception',
    );
  });
});

describe('OpenSearchDocumentIndex', () => {
  const a = record(TENANT, '2026-11-10T12:00:00.001Z', {
    title: 'ﬁle',
    metadata: { k: [1, 'two'] },
    client: 'acme',
    version: 3,
    updated_at: '2026-11-10T12:05:00.000Z',
    superseded_by: '0193a000-0000-7000-8000-0000000000ff',
  });
  const b = record(OTHER, '2026-11-10T12:00:00.002Z');
  const c = record(TENANT, '2026-11-10T12:00:00.003Z');

  test('one bulk request: index with the record id and tenant routing, delete likewise, no refresh', async () => {
    fake.reply = () => ({
      status: 200,
      body: {
        took: 5,
        errors: false,
        items: [
          { index: { _index: INDEX, _id: a.id, _version: 1, result: 'created', status: 201 } },
          { delete: { _index: INDEX, _id: 'gone', _version: 2, result: 'deleted', status: 200 } },
          { index: { _index: INDEX, _id: b.id, _version: 3, result: 'updated', status: 200 } },
        ],
      },
    });
    const changes = [
      { kind: 'upsert' as const, record: a },
      { kind: 'delete' as const, tenant_id: TENANT, id: 'gone' },
      { kind: 'upsert' as const, record: b },
    ];
    expect(await new OpenSearchDocumentIndex(client, INDEX).apply(changes)).toEqual([null, null, null]);

    expect(fake.received).toHaveLength(1);
    const [request] = fake.received;
    // The client sends a bulk with an index in its path as PUT; OpenSearch takes PUT or POST there.
    expect(request).toMatchObject({ method: 'PUT', path: `/${INDEX}/_bulk`, query: {} });
    expect(request!.headers['content-type']).toMatch(/ndjson/);
    expect(request!.body).toEqual([
      { index: { _id: `${TENANT}:${a.id}`, routing: TENANT } },
      {
        id: a.id,
        tenant_id: TENANT,
        agent_id: 'support-bot',
        type: 'fact',
        client: 'acme',
        created_at: a.created_at,
        title: 'file',
        body: 'A body',
        classification: null,
        version: 3,
        updated_at: '2026-11-10T12:05:00.000Z',
        superseded_by: '0193a000-0000-7000-8000-0000000000ff',
        record: {
          id: a.id,
          tenant_id: TENANT,
          agent_id: 'support-bot',
          type: 'fact',
          title: 'ﬁle',
          body: 'A body',
          client: 'acme',
          metadata: '{"k":[1,"two"]}',
          created_at: a.created_at,
          classification: null,
          version: 3,
          updated_at: '2026-11-10T12:05:00.000Z',
          superseded_by: '0193a000-0000-7000-8000-0000000000ff',
        },
      },
      { delete: { _id: `${TENANT}:gone`, routing: TENANT } },
      { index: { _id: `${OTHER}:${b.id}`, routing: OTHER } },
      recordDocument(b),
    ]);
  });

  test('a replay sends the same document again, under the same id', async () => {
    fake.reply = () => ({ status: 200, body: { took: 1, errors: false, items: [{ index: { _index: INDEX, _id: c.id, result: 'updated', status: 200 } }] } });
    const index = new OpenSearchDocumentIndex(client, INDEX);
    await index.apply([{ kind: 'upsert', record: c }]);
    await index.apply([{ kind: 'upsert', record: c }]);
    expect(fake.received[1]!.body).toEqual(fake.received[0]!.body);
  });

  test('per-item results: success, a delete of nothing, a mapping error and a rejection', async () => {
    fake.reply = () => ({
      status: 200,
      body: {
        took: 5,
        errors: true,
        items: [
          { index: { _index: INDEX, _id: a.id, result: 'created', status: 201 } },
          { delete: { _index: INDEX, _id: 'missing', result: 'not_found', status: 404 } },
          {
            index: {
              _index: INDEX,
              _id: b.id,
              status: 400,
              error: { type: 'mapper_parsing_exception', reason: 'failed to parse field [created_at] of type [date]' },
            },
          },
          {
            index: {
              _index: INDEX,
              _id: c.id,
              status: 429,
              error: { type: 'rejected_execution_exception', reason: 'rejected execution of coordinating operation' },
            },
          },
          {
            delete: {
              _index: INDEX,
              _id: 'x',
              status: 404,
              error: { type: 'index_not_found_exception', reason: 'no such index [memory-records]' },
            },
          },
        ],
      },
    });
    const result = await new OpenSearchDocumentIndex(client, INDEX).apply([
      { kind: 'upsert', record: a },
      { kind: 'delete', tenant_id: TENANT, id: 'missing' },
      { kind: 'upsert', record: b },
      { kind: 'upsert', record: c },
      { kind: 'delete', tenant_id: TENANT, id: 'x' },
    ]);
    expect(result).toEqual([
      null,
      null,
      '400 mapper_parsing_exception: failed to parse field [created_at] of type [date]',
      '429 rejected_execution_exception: rejected execution of coordinating operation',
      '404 index_not_found_exception: no such index [memory-records]',
    ]);
  });

  test('a change the bulk response has no item for has failed', async () => {
    fake.reply = () => ({ status: 200, body: { took: 1, errors: false, items: [{ index: { _index: INDEX, _id: a.id, status: 201 } }] } });
    const result = await new OpenSearchDocumentIndex(client, INDEX).apply([
      { kind: 'upsert', record: a },
      { kind: 'upsert', record: b },
    ]);
    expect(result).toEqual([null, 'the bulk response has no item for this change']);
  });

  test('when the whole bulk request fails, every change fails with its error', async () => {
    fake.reply = () => ({
      status: 500,
      body: { error: { type: 'internal_server_error', reason: 'boom', root_cause: [{ type: 'internal_server_error', reason: 'boom' }] }, status: 500 },
    });
    const result = await new OpenSearchDocumentIndex(client, INDEX).apply([
      { kind: 'upsert', record: a },
      { kind: 'delete', tenant_id: TENANT, id: 'gone' },
    ]);
    const reason = 'bulk request failed: 500 internal_server_error: [internal_server_error] Reason: boom';
    expect(result).toEqual([reason, reason]);
    expect(fake.received).toHaveLength(1);
  });

  test('no changes, no request', async () => {
    expect(await new OpenSearchDocumentIndex(client, INDEX).apply([])).toEqual([]);
    expect(fake.received).toEqual([]);
  });
});

describe('the records index template', () => {
  test('is put as a composable index template for the pattern', async () => {
    fake.reply = () => ({ status: 200, body: { acknowledged: true } });
    await putRecordsIndexTemplate(client, { name: 'memory-records', indexPattern: 'memory-records-*' });
    expect(fake.received).toHaveLength(1);
    // The client sends it as POST; OpenSearch serves PUT and POST on this path alike.
    expect(fake.received[0]).toMatchObject({ method: 'POST', path: '/_index_template/memory-records', query: {} });
    expect(fake.received[0]!.body).toEqual(recordsIndexTemplate('memory-records-*'));
  });

  test("analyzes title and body with the embedded engine's rules, keeps filters as keywords and indexes nothing else", () => {
    const template = recordsIndexTemplate('memory-records-*', { replicas: 2 });
    expect(template).toMatchObject({
      index_patterns: ['memory-records-*'],
      template: { settings: { index: { number_of_shards: 1, number_of_replicas: 2, analysis: recordsAnalysis() } } },
    });
    // The analyzer's patterns are the ones the embedded engine and the query parser cut text with.
    const analysis = recordsAnalysis();
    expect(analysis.tokenizer.memory_tokens).toEqual({ type: 'pattern', pattern: TOKEN_SOURCE, group: 0 });
    expect(analysis.char_filter.memory_clitics.pattern).toBe(CLITIC_SOURCE);
    expect(analysis.analyzer[RECORDS_ANALYZER]!.filter).toEqual(['lowercase', 'memory_identifiers', 'memory_truncate', 'memory_not_english', 'porter_stem']);
    expect(analysis.filter.memory_identifiers).toMatchObject({ preserve_original: true, split_on_case_change: false, split_on_numerics: false, stem_english_possessive: false });
    expect(template.template!.mappings).toEqual({
      dynamic: 'strict',
      _routing: { required: true },
      properties: {
        id: { type: 'keyword' },
        tenant_id: { type: 'keyword' },
        agent_id: { type: 'keyword' },
        type: { type: 'keyword' },
        client: { type: 'keyword' },
        created_at: { type: 'date', format: 'strict_date_optional_time' },
        title: { type: 'text', analyzer: RECORDS_ANALYZER, similarity: RECORDS_SIMILARITY },
        body: { type: 'text', analyzer: RECORDS_ANALYZER, similarity: RECORDS_SIMILARITY },
        classification: {
          type: 'object',
          properties: {
            type: { type: 'keyword' },
            confidence: { type: 'float' },
            model: { type: 'keyword' },
            classified_at: { type: 'date', format: 'strict_date_optional_time' },
          },
        },
        version: { type: 'long' },
        updated_at: { type: 'date', format: 'strict_date_optional_time' },
        superseded_by: { type: 'keyword' },
        record: { type: 'object', enabled: false },
      },
    });
  });
});

describe('ranking settings of the records index', () => {
  type Settings = { index: { similarity: Record<string, unknown> } };
  const similarityOf = (template: ReturnType<typeof recordsIndexTemplate>) => (template.template!.settings as Settings).index.similarity;

  test("the template request defines a BM25 similarity with RANKING's k1 and b, used by title and body", async () => {
    fake.reply = () => ({ status: 200, body: { acknowledged: true } });
    await putRecordsIndexTemplate(client, { name: 'memory-records', indexPattern: 'memory-records-*' });
    // As the cluster receives it: the settings every index created from the template gets.
    const sent = fake.received[0]!.body as {
      version: number;
      template: { settings: Settings; mappings: { properties: Record<string, { similarity?: string }> } };
    };
    expect(sent.version).toBe(RECORDS_TEMPLATE_VERSION);
    expect(sent.template.settings.index.similarity).toEqual({
      [RECORDS_SIMILARITY]: { type: 'BM25', k1: RANKING.k1, b: RANKING.b, discount_overlaps: true },
    });
    const ranked = Object.entries(sent.template.mappings.properties).filter(([, p]) => p.similarity !== undefined);
    expect(ranked).toEqual([
      ['title', expect.objectContaining({ type: 'text', similarity: RECORDS_SIMILARITY })],
      ['body', expect.objectContaining({ type: 'text', similarity: RECORDS_SIMILARITY })],
    ]);
  });

  test('k1 and b are read from RANKING when the template is built, never copied', () => {
    const saved = { ...RANKING };
    try {
      Object.assign(RANKING, { k1: RANKING.k1 + 0.35, b: RANKING.b / 2 });
      expect(similarityOf(recordsIndexTemplate('memory-records-*'))).toEqual({
        [RECORDS_SIMILARITY]: { type: 'BM25', k1: saved.k1 + 0.35, b: saved.b / 2, discount_overlaps: true },
      });
    } finally {
      Object.assign(RANKING, saved);
    }
    expect(similarityOf(recordsIndexTemplate('memory-records-*'))).toEqual({
      [RECORDS_SIMILARITY]: { type: 'BM25', k1: saved.k1, b: saved.b, discount_overlaps: true },
    });
  });
});

describe('openSearchClient', () => {
  test('signs every request with SigV4 for the es service when told to', async () => {
    const signed = openSearchClient({
      node: `http://127.0.0.1:${new URL(client.connectionPool.connections[0]!.url).port}`,
      sigv4: {
        region: 'eu-west-1',
        getCredentials: async () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' }),
      },
    });
    try {
      fake.reply = () => ({ status: 200, body: { took: 1, errors: false, items: [{ delete: { _index: INDEX, status: 404 } }] } });
      await new OpenSearchDocumentIndex(signed, INDEX).apply([{ kind: 'delete', tenant_id: TENANT, id: 'x' }]);
    } finally {
      await signed.close();
    }
    const { headers } = fake.received[0]!;
    expect(headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/es\/aws4_request, /);
    expect(headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
    expect(headers['x-amz-content-sha256']).toMatch(/^[0-9a-f]{64}$/);
  });

  test('sends requests unsigned when told so', async () => {
    fake.reply = () => ({ status: 200, body: { took: 1, errors: false, items: [{ delete: { _index: INDEX, status: 404 } }] } });
    await new OpenSearchDocumentIndex(client, INDEX).apply([{ kind: 'delete', tenant_id: TENANT, id: 'x' }]);
    expect(fake.received[0]!.headers.authorization).toBeUndefined();
  });
});
