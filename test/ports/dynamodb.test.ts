import { Logger } from '@aws-lambda-powertools/logger';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createIndexerHandler } from '../../functions/indexer/handler.js';
import { lambdaContext } from '../../local/lambda-context.js';
import { StreamPoller } from '../../local/stream-poller.js';
import { documentClient } from '../../shared/adapters/aws/dynamodb/client.js';
import { dynamoDbAdapters } from '../../shared/adapters/aws/dynamodb/index.js';
import { DynamoDbRecordStore } from '../../shared/adapters/aws/dynamodb/record-store.js';
import { recordFromImage } from '../../shared/adapters/aws/dynamodb/record-item.js';
import { SqliteDocumentIndex } from '../../shared/adapters/local/document-index.js';
import { openSqliteAdapters } from '../../shared/adapters/local/index.js';
import { createTestTables, describeWithDynamoDb } from '../support/dynamodb.js';
import { runPortSuite } from './port-suite.js';

/**
 * The port suite on the AWS backend: records, keys and counters in DynamoDB Local, with the same
 * transactions as on AWS. Search is what the AWS-shaped local mode runs: the table's stream, read by the
 * stream poller, feeds the real indexer handler, which writes the SQLite index (no OpenSearch runs here;
 * test/ports/opensearch.test.ts runs the suite on a real cluster). The job queue is the local stand-in
 * for SQS.
 */
describeWithDynamoDb('the AWS backend', (endpoint) => {
  runPortSuite(
    'DynamoDB',
    async () => {
      const tables = await createTestTables(endpoint);
      const dir = mkdtempSync(join(tmpdir(), 'memory-ports-dynamodb-'));
      const index = openSqliteAdapters(join(dir, 'index.db'));
      const logger = new Logger({ logLevel: 'SILENT' });
      const indexer = createIndexerHandler({ index: new SqliteDocumentIndex(index.db), jobs: index.jobs, recordFromImage, logger });
      const poller = new StreamPoller({
        config: { region: 'us-east-1', dynamodbEndpoint: endpoint },
        tableName: tables.names.records,
        handler: (event) => indexer(event, lambdaContext('indexer')),
        logger,
        pollIntervalMs: 50,
      });
      poller.start();
      return {
        ...dynamoDbAdapters(tables.client, tables.names),
        recordsAt: (clock) => new DynamoDbRecordStore(documentClient(tables.client), tables.names, clock),
        search: index.search,
        jobs: index.jobs,
        settle: () => poller.settle(10_000),
        close: async () => {
          await poller.stop();
          index.close();
          await tables.drop();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
    // The index is the embedded engine's (SqliteDocumentIndex), as on SQLite; fewer records, since each is a
    // DynamoDB transaction and a trip through the stream.
    { createQueuesJob: false, ownRanks: { otherTenantRecords: 1_000 } },
  );
});
