import type { CreateTableCommandInput, StreamViewType } from '@aws-sdk/client-dynamodb';

/**
 * The four DynamoDB tables, described once. The CDK stack and the code that creates tables for DynamoDB
 * Local (tests, the AWS-shaped local mode) both build from these, so they cannot drift apart.
 * Every key attribute is a string.
 */
export interface TableSpec {
  partitionKey: string;
  sortKey?: string;
  /** The stream the indexer reads, when the table has one. */
  stream?: StreamViewType;
  /** The attribute holding an epoch-seconds expiry that DynamoDB TTL deletes by. */
  timeToLiveAttribute?: string;
}

export const TABLES = {
  /**
   * Records. The partition key is `<tenant_id>#<shard>` and the sort key the UUIDv7 id: see
   * `recordKey` for why a tenant spreads over 16 partitions. The stream carries new and old images, so
   * the indexer sees each INSERT and each classification MODIFY.
   */
  records: { partitionKey: 'pk', sortKey: 'id', stream: 'NEW_AND_OLD_IMAGES' },
  /**
   * Tenants, their keys, the lookups by key hash and by key id, and forget jobs (item kinds told apart by
   * `sk`). Only an ended forget job has a `ttl`: it expires FORGET_JOB_RETENTION_DAYS after it ended.
   */
  tenants: { partitionKey: 'pk', sortKey: 'sk', timeToLiveAttribute: 'ttl' },
  /** One counter item per tenant and UTC month: `records` and `queries`. */
  usage: { partitionKey: 'tenant_id', sortKey: 'month' },
  /** Idempotency keys, `<tenant_id>#<key>`, expired by TTL 24 h after the write they belong to. */
  idempotency: { partitionKey: 'pk', timeToLiveAttribute: 'ttl' },
} as const satisfies Record<string, TableSpec>;

export type TableRole = keyof typeof TABLES;

/** The physical name of each table, from configuration. */
export type TableNames = Record<TableRole, string>;

/** The CreateTable request for one table: on-demand, with its stream if it has one. */
export function createTableInput(role: TableRole, name: string): CreateTableCommandInput {
  const spec: TableSpec = TABLES[role];
  const keys = spec.sortKey === undefined ? [spec.partitionKey] : [spec.partitionKey, spec.sortKey];
  return {
    TableName: name,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: keys.map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
    KeySchema: keys.map((AttributeName, i) => ({ AttributeName, KeyType: i === 0 ? 'HASH' : 'RANGE' })),
    ...(spec.stream ? { StreamSpecification: { StreamEnabled: true, StreamViewType: spec.stream } } : {}),
  };
}
