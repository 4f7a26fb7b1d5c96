/**
 * The AWS-shaped backends of the local runtime and the admin CLI (MEMORY_BACKEND=dynamodb). backends.ts
 * loads this module only when that backend is configured, so the embedded default never loads the AWS SDK
 * (about a quarter of a second at every start of the server and the admin CLI).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { createIndexerHandler } from '../functions/indexer/handler.js';
import type { AwsConfig } from '../shared/adapters/aws/config.js';
import { TableCheckedSearch } from '../shared/adapters/aws/dynamodb/checked-search.js';
import { dynamoDbClient } from '../shared/adapters/aws/dynamodb/client.js';
import { ensureTables, missingTables } from '../shared/adapters/aws/dynamodb/ensure-tables.js';
import { dynamoDbAdapters } from '../shared/adapters/aws/dynamodb/index.js';
import { recordFromImage } from '../shared/adapters/aws/dynamodb/record-item.js';
import { ApiGatewayKeyRegistry } from '../shared/adapters/aws/gateway/usage-plans.js';
import { SqliteDocumentIndex } from '../shared/adapters/local/document-index.js';
import { openSqliteAdapters } from '../shared/adapters/local/index.js';
import { SearchMerge } from '../shared/adapters/local/search-merge.js';
import { CursorSealer } from '../shared/domain/cursor-sealer.js';
import { NoDatabaseError, type AdminStores, type Backend } from './backend.js';
import { searchOn } from './backends-sqlite.js';
import type { LocalConfig } from './config.js';
import { inProcessForgetJobs } from './forget-jobs.js';
import { lambdaContext } from './lambda-context.js';
import { StreamPoller } from './stream-poller.js';

/**
 * The AWS-shaped mode: records, keys, counters and idempotency keys on DynamoDB (DynamoDB Local), with the
 * same transactions as on AWS. A stream poller plays the Lambda event source mapping and feeds the real
 * indexer handler; since no OpenSearch runs here, the indexer writes the SQLite index, and the
 * classification jobs go to the SQLite queue, which the job loop delivers as SQS-shaped events.
 *
 * The SQLite index is a copy of the table that the stream rebuilds: when the records table is new (say,
 * DynamoDB Local restarted in memory), the old index file is dropped with it.
 */
export async function openDynamoDbBackend(config: LocalConfig, aws: AwsConfig, logger: Logger): Promise<Backend> {
  const client = dynamoDbClient(aws);
  // Only an emulator gets its tables made here; on AWS the CDK stack owns them.
  const created = aws.dynamodbEndpoint ? await ensureTables(client, aws.tables) : [];
  const indexFile = join(config.dataDir, 'dynamodb-index.db');
  if (created.includes('records')) {
    for (const suffix of ['', '-wal', '-shm']) rmSync(indexFile + suffix, { force: true });
  }
  const index = openSqliteAdapters(indexFile, { progress: (line) => logger.info(line) });
  const search = searchOn(index, indexFile, config);
  const forgetJobs = inProcessForgetJobs(() => dynamo.records, logger);
  const dynamo = dynamoDbAdapters(client, aws.tables, { forgetJobs });
  const indexer = createIndexerHandler({
    index: new SqliteDocumentIndex(index.db, index.merger),
    jobs: index.jobs,
    recordFromImage,
    logger: logger.createChild(),
  });
  const poller = new StreamPoller({
    config: aws,
    tableName: aws.tables.records,
    handler: (event) => indexer(event, lambdaContext('indexer')),
    logger,
  });
  const merge = new SearchMerge(index.db);
  return {
    ...dynamo,
    // As the query Lambda does: hits checked against the table, since the index follows the stream.
    search: new TableCheckedSearch(search, dynamo.records),
    jobs: index.jobs,
    mergeBacklog: () => merge.pending(),
    authGeneration: null,
    classificationThread: null,
    // Kept in the index file, which goes with the records table: a new table (and so no record a cursor
    // could point at) makes a new key.
    cursors: new CursorSealer(index.secrets.get('cursor-key')),
    describe: `records in DynamoDB at ${aws.dynamodbEndpoint ?? `AWS ${aws.region}`} (table ${aws.tables.records}), search index in ${indexFile}`,
    start: () => {
      index.merger.wake();
      poller.start();
    },
    // DynamoDB expires idempotency keys itself, with TTL.
    sweep: () => ({ purgedIdempotencyKeys: 0 }),
    settle: (timeoutMs = 10_000) => poller.settle(timeoutMs),
    close: async () => {
      await forgetJobs.idle();
      await forgetJobs.stop();
      await poller.stop();
      await search.close();
      index.close();
      client.destroy();
    },
  };
}

/** openAdminStores on DynamoDB: the tables must exist on DynamoDB Local unless `create`; on AWS the stack owns them. */
export async function openDynamoDbAdminStores(aws: AwsConfig, { create }: { create: boolean }): Promise<AdminStores> {
  const client = dynamoDbClient(aws);
  if (aws.dynamodbEndpoint) {
    try {
      if (create) await ensureTables(client, aws.tables);
      const missing = await missingTables(client, aws.tables);
      if (missing.length > 0) {
        throw new NoDatabaseError(
          `no table ${missing.join(', ')} at ${aws.dynamodbEndpoint}. Point DYNAMODB_ENDPOINT and the MEMORY_*_TABLE names ` +
            'at the tables the server uses, or pass --create to create them.',
          { endpoint: aws.dynamodbEndpoint, tables: missing.join(',') },
        );
      }
    } catch (error) {
      client.destroy();
      throw error;
    }
  }
  const { keys, usage, records } = dynamoDbAdapters(client, aws.tables);
  const apiGateway = aws.gateway ? new APIGatewayClient({ region: aws.region }) : null;
  return {
    keys,
    usage,
    records,
    gateway: apiGateway && aws.gateway ? new ApiGatewayKeyRegistry(apiGateway, aws.gateway) : null,
    close: () => {
      client.destroy();
      apiGateway?.destroy();
    },
  };
}
