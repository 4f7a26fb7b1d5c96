import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { documentClient } from './client.js';
import type { ForgetJobSink } from './forget-jobs.js';
import { DynamoDbKeyStore } from './key-store.js';
import { DynamoDbRecordStore } from './record-store.js';
import type { TableNames } from './tables.js';
import { DynamoDbUsageMeter } from './usage-meter.js';

/** The ports DynamoDB holds: the system of record, the keys and the counters. */
export interface DynamoDbAdapters {
  records: DynamoDbRecordStore;
  keys: DynamoDbKeyStore;
  usage: DynamoDbUsageMeter;
}

/** Builds the DynamoDB adapters on one client and the configured table names; `forgetJobs` takes large forgets. */
export function dynamoDbAdapters(client: DynamoDBClient, tables: TableNames, options: { forgetJobs?: ForgetJobSink; forgetSyncMax?: number } = {}): DynamoDbAdapters {
  const db = documentClient(client);
  return {
    records: new DynamoDbRecordStore(db, tables, Date.now, { jobs: options.forgetJobs, ...(options.forgetSyncMax === undefined ? {} : { syncMax: options.forgetSyncMax }) }),
    keys: new DynamoDbKeyStore(db, tables.tenants),
    usage: new DynamoDbUsageMeter(db, tables.usage),
  };
}
