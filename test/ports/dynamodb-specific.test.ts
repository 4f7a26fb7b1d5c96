import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { dynamoDbAdapters } from '../../shared/adapters/aws/dynamodb/index.js';
import { recordKey, RECORD_SHARDS } from '../../shared/adapters/aws/dynamodb/record-item.js';
import { TABLES } from '../../shared/adapters/aws/dynamodb/tables.js';
import { newRecord } from '../../shared/domain/record.js';
import { createTestTables, describeWithDynamoDb, type TestTables } from '../support/dynamodb.js';

const LIMITS = { recordQuota: 100, queryQuota: 100, rate: 1, burst: 1 };
const input = { agent_id: 'a', type: 'fact' as const, title: 't', body: 'b' };

describe('record keys', () => {
  test('a tenant\'s records spread evenly over 16 partition keys', () => {
    const tenant = '01900000-0000-7000-8000-000000000000';
    const counts = new Map<string, number>();
    const start = Date.parse('2026-11-10T12:00:00.000Z');
    // Ids from one busy millisecond, then from many: both must spread.
    for (let i = 0; i < 16_000; i++) {
      const { pk } = recordKey(tenant, newRecord(tenant, input, new Date(start + (i < 8000 ? 0 : i))).id);
      counts.set(pk, (counts.get(pk) ?? 0) + 1);
    }
    expect(counts.size).toBe(RECORD_SHARDS);
    for (const n of counts.values()) expect(n).toBeGreaterThan(800);
    for (const pk of counts.keys()) expect(pk.startsWith(`${tenant}#`)).toBe(true);
  });
});

describeWithDynamoDb('DynamoDB adapters, beyond the port suite', (endpoint) => {
  let t: TestTables;
  beforeEach(async () => {
    t = await createTestTables(endpoint);
  });
  afterEach(() => t.drop());

  test('the tables are created as the specs say, with the records stream carrying both images', async () => {
    const { Table } = await t.client.send(new DescribeTableCommand({ TableName: t.names.records }));
    expect(Table?.KeySchema).toEqual([
      { AttributeName: TABLES.records.partitionKey, KeyType: 'HASH' },
      { AttributeName: TABLES.records.sortKey, KeyType: 'RANGE' },
    ]);
    expect(Table?.StreamSpecification).toEqual({ StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' });
    expect(Table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
  });

  test('a count whose response is lost is retried by the SDK and still counted once', async () => {
    const { keys, usage } = dynamoDbAdapters(t.client, t.names);
    const tenant = (await keys.createTenant({ name: 'n', limits: LIMITS })).tenant_id;
    // The first attempt of each call reaches DynamoDB and commits, then its answer is "lost".
    let attempts = 0;
    t.client.middlewareStack.add(
      (next) => async (args) => {
        const result = await next(args);
        const target = (args.request as { headers?: Record<string, string> }).headers?.['x-amz-target'];
        if (target === 'DynamoDB_20120810.TransactWriteItems' && attempts++ % 2 === 0) {
          throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
        }
        return result;
      },
      { step: 'finalizeRequest', priority: 'low', name: 'loseFirstResponse' },
    );
    expect(await usage.countQuery(tenant, '2026-11', 10)).toBe(true);
    expect(await usage.countQuery(tenant, '2026-11', 10)).toBe(true);
    expect(attempts).toBe(4);
    expect(await usage.list('2026-11', tenant)).toEqual([{ tenant_id: tenant, month: '2026-11', records: 0, queries: 2 }]);

    const { records } = dynamoDbAdapters(t.client, t.names);
    await records.create(tenant, newRecord(tenant, input, new Date()), { recordQuota: 10, month: '2026-11' });
    expect(attempts).toBe(6);
    expect((await usage.list('2026-11', tenant))[0]).toMatchObject({ records: 1 });
  });

  test('setClassification never brings back a record that is gone', async () => {
    const { records } = dynamoDbAdapters(t.client, t.names);
    const c = { type: 'decision' as const, confidence: 0.5, model: 'm', classified_at: '2026-11-10T12:00:00.000Z' };
    expect(await records.setClassification('01900000-0000-7000-8000-000000000000', '01900000-0000-7000-8000-00000000000a', c)).toBe(false);
    expect(await records.get('01900000-0000-7000-8000-000000000000', '01900000-0000-7000-8000-00000000000a')).toBeNull();
  });
});
