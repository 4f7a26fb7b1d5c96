import { Logger } from '@aws-lambda-powertools/logger';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { openBackend, type Backend } from '../../local/backends.js';
import { loadConfig } from '../../local/config.js';
import { documentClient } from '../../shared/adapters/aws/dynamodb/client.js';
import { recordToItem } from '../../shared/adapters/aws/dynamodb/record-item.js';
import type { Db } from '../../shared/adapters/local/database.js';
import { SqliteSearchIndex } from '../../shared/adapters/local/search-index.js';
import { awsShapedEnv, createTestTables } from '../support/dynamodb.js';
import type { ModelSystem } from './model-parts.js';

/**
 * The AWS-shaped backend for the model (search-index-model.ts), as `MEMORY_BACKEND=dynamodb npm start`
 * composes it: records in DynamoDB Local, its stream polled into the real indexer, which writes the SQLite
 * index; searches checked against the table, as the query function does. A new text is a put of the whole
 * item, which the stream brings as a MODIFY. The model steps merges and checks the invariants on a
 * connection of its own to the index file, as another process would; a restart closes the backend, its
 * stream poller included, and opens it again on the same tables and file. The index's own searcher leaves
 * superseded records out one candidate at a time (excludedMax 1), the backend's by their list.
 */
export async function awsShapedSystem(endpoint: string, dir: string): Promise<ModelSystem> {
  const tables = await createTestTables(endpoint);
  const config = loadConfig({
    ...awsShapedEnv(tables),
    MEMORY_DATA_DIR: dir,
    MEMORY_SEARCH_THREADS: '0',
    LOG_LEVEL: 'SILENT',
  });
  const logger = new Logger({ logLevel: 'SILENT' });
  const items = documentClient(tables.client);
  let backend: Backend;
  let index: Db;
  let reader: SqliteSearchIndex;
  const open = async () => {
    backend = await openBackend(config, logger);
    backend.start();
    index = new Database(join(dir, 'dynamodb-index.db'), { fileMustExist: true });
    index.pragma('busy_timeout = 5000');
    reader = new SqliteSearchIndex(index, { excludedMax: 1 });
  };
  const close = async () => {
    await backend.close();
    index.close();
  };
  await open();
  return {
    get records() {
      return backend.records;
    },
    changeText: async (record) => void (await items.send(new PutCommand({ TableName: tables.names.records, Item: recordToItem(record) }))),
    searchers: () => [
      ['table-checked', backend.search],
      ['index', reader],
    ],
    indexDb: () => index,
    settle: () => backend.settle(),
    restart: async () => {
      await close();
      await open();
    },
    close: async () => {
      await close();
      await tables.drop();
    },
  };
}
