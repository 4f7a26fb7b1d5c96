import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSearchClient } from '../../shared/adapters/aws/opensearch/client.js';
import { bestScoreFrom, bestScoreRequest } from '../../shared/adapters/aws/opensearch/best-score.js';
import { ANALYZER_CASES } from '../support/analyzer-cases.js';
import { forgetMatches } from '../../shared/adapters/aws/dynamodb/forget-jobs.js';
import { OpenSearchDocumentIndex } from '../../shared/adapters/aws/opensearch/document-index.js';
import { putRecordsIndexTemplate, recordFromSource, RECORDS_SIMILARITY } from '../../shared/adapters/aws/opensearch/mapping.js';
import { buildSearchRequest } from '../../shared/adapters/aws/opensearch/query.js';
import { OpenSearchSearchIndex } from '../../shared/adapters/aws/opensearch/search-index.js';
import { openSqliteAdapters } from '../../shared/adapters/local/index.js';
import { SqliteRecordStore } from '../../shared/adapters/local/record-store.js';
import { parseQuery } from '../../shared/domain/query-parse.js';
import { rankFromScore } from '../../shared/domain/rank.js';
import { newRecord, type StoredRecord } from '../../shared/domain/record.js';
import type { RecordStore } from '../../shared/ports.js';
import { RANKING } from '../../shared/domain/rank.js';
import { runPortSuite } from './port-suite.js';

/**
 * The port suite with search on a real OpenSearch cluster, opt-in: set OPENSEARCH_URL (and
 * OPENSEARCH_SIGV4=true with AWS_REGION for an Amazon OpenSearch Service domain). Records, keys, usage
 * and jobs stay on SQLite; every record write is pushed through OpenSearchDocumentIndex, as the indexer
 * does from the DynamoDB stream, and searches go to OpenSearchSearchIndex.
 */
const url = process.env.OPENSEARCH_URL;

if (url === undefined || url === '') {
  describe('ports on OpenSearch', () => {
    test.skip('skipped: set OPENSEARCH_URL=... to run the port suite against a real OpenSearch cluster', () => undefined);
  });
} else {
  const region = process.env.AWS_REGION;
  const signed = process.env.OPENSEARCH_SIGV4 === 'true';
  // A signature for the wrong region only shows up as a 403, so a missing region fails here, named.
  if (signed && (region === undefined || region === '')) throw new Error('OPENSEARCH_SIGV4=true needs AWS_REGION');
  const client = openSearchClient({ node: url, sigv4: signed ? { region: region! } : false });
  // One template per run, for this run's indices only, so concurrent runs on one cluster never meet.
  const prefix = `memory-porttest-${randomUUID().slice(0, 8)}`;
  let template: Promise<void> | undefined;

  afterAll(async () => {
    await client.indices.deleteIndexTemplate({ name: prefix }).catch(() => undefined);
    await client.close();
  });

  runPortSuite(
    'OpenSearch',
    async () => {
      template ??= putRecordsIndexTemplate(client, { name: prefix, indexPattern: `${prefix}-*` });
      await template;
      const index = `${prefix}-${randomUUID()}`;
      await client.indices.create({ index });

      const dir = mkdtempSync(join(tmpdir(), 'memory-ports-'));
      const adapters = openSqliteAdapters(join(dir, 'memory.db'));
      const documents = new OpenSearchDocumentIndex(client, index);

      /** Indexes the record exactly as the store now holds it, as the stream would deliver it. */
      async function push(tenantId: string, id: string): Promise<void> {
        const stored = await adapters.records.get(tenantId, id);
        if (stored === null) throw new Error(`record ${id} is not in the store`);
        const [failure] = await documents.apply([{ kind: 'upsert', record: stored }]);
        if (failure !== null) throw new Error(`indexing ${id} failed: ${String(failure)}`);
      }

      const records: RecordStore = {
        async create(tenantId, record, options) {
          const result = await adapters.records.create(tenantId, record, options);
          // A replayed write indexes the first record again: harmless, since indexing is idempotent. The records
          // it superseded are MODIFYs on the stream.
          await push(tenantId, result.receipt.id);
          if (!result.replayed) for (const id of options.supersedes?.ids ?? []) await push(tenantId, id);
          return result;
        },
        ping: () => adapters.records.ping(),
        get: (tenantId, id) => adapters.records.get(tenantId, id),
        async update(tenantId, id, patch, options) {
          const updated = await adapters.records.update(tenantId, id, patch, options);
          // As the stream would deliver the MODIFY.
          if (updated) await push(tenantId, id);
          return updated;
        },
        async delete(tenantId, id) {
          const deleted = await adapters.records.delete(tenantId, id);
          // As the stream would deliver the delete.
          if (deleted) {
            const [failure] = await documents.apply([{ kind: 'delete', tenant_id: tenantId, id }]);
            if (failure !== null) throw new Error(`deleting ${id} from the index failed: ${String(failure)}`);
          }
          return deleted;
        },
        async setClassification(tenantId, id, classification) {
          const found = await adapters.records.setClassification(tenantId, id, classification);
          if (found) await push(tenantId, id);
          return found;
        },
        list: (tenantId, request) => adapters.records.list(tenantId, request),
        // One delete at a time, each as the stream would deliver it: what the forget matches, then deleted.
        async forget(tenantId, selectors, options) {
          const counted = await adapters.records.forget(tenantId, selectors, { ...options, dryRun: true });
          if (options.dryRun || counted.kind !== 'done') return counted;
          const all = await adapters.records.list(tenantId, { filters: {}, order: 'asc', limit: 1_000_000 });
          let deleted = 0;
          for (const record of all.filter((r) => forgetMatches(r, selectors, options.at.toISOString()))) {
            if (await records.delete(tenantId, record.id)) deleted++;
          }
          return { kind: 'done', matched: counted.matched, deleted };
        },
        forgetJob: (tenantId, jobId) => adapters.records.forgetJob(tenantId, jobId),
        async import(tenantId, imported) {
          const result = await adapters.records.import(tenantId, imported);
          for (const record of imported) await push(tenantId, record.id).catch(() => undefined);
          return result;
        },
        eraseTenant: (tenantId) => adapters.records.eraseTenant(tenantId),
      };

      return {
        records,
        // The 24-hour idempotency case searches nothing: the SQLite store on its own clock will do.
        recordsAt: (clock: () => number) => new SqliteRecordStore(adapters.db, clock),
        search: new OpenSearchSearchIndex(client, index),
        keys: adapters.keys,
        usage: adapters.usage,
        jobs: adapters.jobs,
        settle: async () => {
          await client.indices.refresh({ index });
        },
        close: async () => {
          await client.indices.delete({ index }).catch(() => undefined);
          adapters.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
    {
      createQueuesJob: true,
      ownRanks: { notSupported: "OpenSearch keeps BM25 statistics per shard, and every tenant routed to a shard shares its statistics (docs/opensearch.md)" },
    },
  );

  /**
   * The ranking the template sets up, on the cluster itself. The records are built so that the scores can
   * be compared whatever the engine version: every title has 2 words and every body 6 (so every document
   * has its field's average length), and each searched word is in 2 titles and in 2 bodies (so its IDF is
   * the same in both fields). Then a title match scores exactly titleWeight times the same match in the
   * body, and a body with the word twice scores 2(1 + k1)/(2 + k1) times a body with it once: ratios that
   * hold with the (k1 + 1) factor of OpenSearch 2.x's BM25 and without it (3.x) alike.
   */
  describe('ranking on OpenSearch', () => {
    const tenant = randomUUID();
    const index = `${prefix}-ranking-${randomUUID().slice(0, 8)}`;
    let at = Date.parse('2026-11-10T12:00:00.000Z');
    const doc = (title: string, body: string): StoredRecord =>
      newRecord(tenant, { agent_id: 'ranker', type: 'fact', title, body }, new Date((at += 1000)));
    const inTitle = doc('zephyr quill', 'maple river stone cloud field lantern');
    const inTitleReversed = doc('quill zephyr', 'maple river stone cloud field lantern');
    const inBody = doc('maple river', 'zephyr quill stone cloud field lantern');
    const twiceInBody = doc('maple river', 'zephyr zephyr stone cloud field lantern');
    const fillers = [
      doc('maple river', 'quill stone cloud field lantern meadow'),
      doc('maple river', 'stone cloud field lantern meadow harbor'),
      doc('maple river', 'stone cloud field lantern meadow harbor'),
    ];

    beforeAll(async () => {
      template ??= putRecordsIndexTemplate(client, { name: prefix, indexPattern: `${prefix}-*` });
      await template;
      await client.indices.create({ index });
      const failures = await new OpenSearchDocumentIndex(client, index).apply(
        [inTitle, inTitleReversed, inBody, twiceInBody, ...fillers].map((record) => ({ kind: 'upsert' as const, record })),
      );
      expect(failures.every((f) => f === null)).toBe(true);
      await client.indices.refresh({ index });
    });

    afterAll(async () => {
      await client.indices.delete({ index }).catch(() => undefined);
    });

    /** Each hit's record id and raw _score, for the request the adapter builds. */
    async function scores(q: string): Promise<Map<string, number>> {
      const request = buildSearchRequest(tenant, { text: parseQuery(q), limit: 20 })!;
      const { body } = await client.search({ index, routing: request.routing, body: request.body });
      return new Map(body.hits.hits.map((hit) => [recordFromSource(hit._source).id, Number(hit._score)]));
    }

    test("the index created from the template ranks title and body with RANKING's k1 and b", async () => {
      const { body } = await client.indices.getSettings({ index, flat_settings: true });
      const settings = (body[index] as { settings: Record<string, string> }).settings;
      expect(Number(settings[`index.similarity.${RECORDS_SIMILARITY}.k1`])).toBe(RANKING.k1);
      expect(Number(settings[`index.similarity.${RECORDS_SIMILARITY}.b`])).toBe(RANKING.b);
      const { body: mapping } = await client.indices.getMapping({ index });
      const properties = (mapping[index] as { mappings: { properties: Record<string, { similarity?: string }> } }).mappings.properties;
      expect([properties.title!.similarity, properties.body!.similarity]).toEqual([RECORDS_SIMILARITY, RECORDS_SIMILARITY]);
    });

    test.each(ANALYZER_CASES)("the index's analyzer gives the embedded engine's terms: $text", async ({ text, terms }) => {
      const { body } = await client.indices.analyze({ index, body: { field: 'body', text } });
      expect((body.tokens ?? []).map((t) => t.token)).toEqual(terms);
    });

    test('a word: scores are positive, a title match outranks the same match in the body by the title weight', async () => {
      expect(RANKING.titleWeight).toBeGreaterThan(1);
      const found = await scores('zephyr');
      expect([...found.keys()].sort()).toEqual([inTitle.id, inTitleReversed.id, inBody.id, twiceInBody.id].sort());
      for (const score of found.values()) expect(score).toBeGreaterThan(0);
      const title = found.get(inTitle.id)!;
      const body = found.get(inBody.id)!;
      expect(title).toBeGreaterThan(body);
      expect(title / body).toBeCloseTo(RANKING.titleWeight, 4);
      expect(found.get(twiceInBody.id)! / body).toBeCloseTo((2 * (1 + RANKING.k1)) / (2 + RANKING.k1), 4);
    });

    test('a phrase: the title match outranks the body match by the title weight; the words out of order do not match', async () => {
      const found = await scores('"zephyr quill"');
      expect([...found.keys()].sort()).toEqual([inTitle.id, inBody.id].sort());
      const title = found.get(inTitle.id)!;
      const body = found.get(inBody.id)!;
      expect(body).toBeGreaterThan(0);
      expect(title / body).toBeCloseTo(RANKING.titleWeight, 4);
    });

    test('through the adapter, the title match ranks above the body match and every rank is its score over the bound, below 1', async () => {
      const raw = await scores('zephyr');
      const text = parseQuery('zephyr')!;
      const hits = await new OpenSearchSearchIndex(client, index).search(tenant, { text, limit: 20 });
      expect(hits).toHaveLength(4);
      const best = bestScoreFrom((await client.mtermvectors(bestScoreRequest(index, tenant, text))).body, text);
      // No score reaches the bound: a word in title and body at once scores less than (k1 + 1) · idf in each.
      expect(Math.max(...raw.values())).toBeLessThan(best);
      const rank = new Map(hits.map((h) => [h.id, h.rank]));
      expect(rank.get(inTitle.id)!).toBeGreaterThan(rank.get(inBody.id)!);
      expect(await new OpenSearchSearchIndex(client, index).search(tenant, { text, min_rank: rank.get(inTitle.id)!, limit: 20 })).toHaveLength(
        hits.filter((h) => h.rank >= rank.get(inTitle.id)!).length,
      );
      hits.forEach((hit, i) => {
        expect(hit.rank).toBeGreaterThan(0);
        expect(hit.rank).toBeLessThan(1);
        expect(hit.rank).toBeCloseTo(rankFromScore(raw.get(hit.id)!, best), 6);
        if (i > 0) expect(hit.rank).toBeLessThanOrEqual(hits[i - 1]!.rank);
      });
    });
  });
}
