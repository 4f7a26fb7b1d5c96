import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSearchClient } from '../../shared/adapters/aws/opensearch/client.js';
import { OpenSearchDocumentIndex } from '../../shared/adapters/aws/opensearch/document-index.js';
import { putRecordsIndexTemplate } from '../../shared/adapters/aws/opensearch/mapping.js';
import { OpenSearchSearchIndex } from '../../shared/adapters/aws/opensearch/search-index.js';
import { openSqliteAdapters } from '../../shared/adapters/local/index.js';
import { SqliteRecordStore } from '../../shared/adapters/local/record-store.js';
import type { RecordStore } from '../../shared/ports.js';
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
          // A replayed write indexes the first record again: harmless, since indexing is idempotent.
          await push(tenantId, result.receipt.id);
          return result;
        },
        get: (tenantId, id) => adapters.records.get(tenantId, id),
        async setClassification(tenantId, id, classification) {
          const found = await adapters.records.setClassification(tenantId, id, classification);
          if (found) await push(tenantId, id);
          return found;
        },
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
    { createQueuesJob: true },
  );
}
