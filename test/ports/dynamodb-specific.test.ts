import { Logger } from '@aws-lambda-powertools/logger';
import { DescribeTableCommand, GetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { createForgetWorker } from '../../functions/forget-worker/handler.js';
import { lambdaContext } from '../../local/lambda-context.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TableCheckedSearch } from '../../shared/adapters/aws/dynamodb/checked-search.js';
import { SqliteDocumentIndex } from '../../shared/adapters/local/document-index.js';
import { openSqliteAdapters } from '../../shared/adapters/local/index.js';
import { parseQuery } from '../../shared/domain/query-parse.js';
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

  test('ping answers while the records table does, and rejects when it does not (a table that is not there)', async () => {
    await expect(dynamoDbAdapters(t.client, t.names).records.ping()).resolves.toBeUndefined();
    await expect(dynamoDbAdapters(t.client, { ...t.names, records: `${t.names.records}-missing` }).records.ping()).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
  });

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

/**
 * Deletes on AWS while the search index lags: the AWS-shaped mode with the index held back. The index (the
 * embedded engine, as the AWS-shaped local mode runs it) is fed by hand with what the stream would carry,
 * and then not told of the deletes, as when OpenSearch has not caught up.
 */
describeWithDynamoDb('deletes on DynamoDB while the search index lags', (endpoint) => {
  const SYNC_MAX = 40;
  let t: TestTables;
  let dir: string;
  let index: ReturnType<typeof openSqliteAdapters>;
  beforeEach(async () => {
    t = await createTestTables(endpoint);
    dir = mkdtempSync(join(tmpdir(), 'memory-lag-'));
    index = openSqliteAdapters(join(dir, 'index.db'));
  });
  afterEach(async () => {
    index.close();
    rmSync(dir, { recursive: true, force: true });
    await t.drop();
  });

  /** A held forget queue: jobs wait until the test runs them. */
  function heldJobs() {
    const waiting: { tenant_id: string; job_id: string }[] = [];
    return { waiting, start: async (job: { tenant_id: string; job_id: string }) => void waiting.push(job) };
  }

  async function setUp(n: number, sink = heldJobs()) {
    // A forget of more than SYNC_MAX records is a job here (FORGET_SYNC_MAX on AWS), so that the tests stay small.
    const { keys, records } = dynamoDbAdapters(t.client, t.names, { forgetJobs: sink, forgetSyncMax: SYNC_MAX });
    const tenant = (await keys.createTenant({ name: 'n', limits: { ...LIMITS, recordQuota: 10_000 } })).tenant_id;
    const written = [];
    let at = Date.parse('2026-11-10T12:00:00.000Z');
    for (let i = 0; i < n; i++) {
      const record = newRecord(tenant, { ...input, agent_id: i % 2 ? 'odd' : 'even', title: `lagging zephyr ${i}` }, new Date((at += 1)));
      await records.create(tenant, record, { recordQuota: 10_000, month: '2026-11' });
      written.push(record);
    }
    // What the stream delivered before it stalled: every record.
    const indexed = new SqliteDocumentIndex(index.db);
    expect(await indexed.apply(written.map((record) => ({ kind: 'upsert' as const, record })))).toEqual(written.map(() => null));
    const search = new TableCheckedSearch(index.search, records);
    const find = async (limit = 20) => (await search.search(tenant, { text: parseQuery('zephyr'), limit })).map((h) => h.id);
    return { tenant, records, written, search, find, sink };
  }

  test('a deleted record is never a hit, though the index still has it, and a full page stays full', async () => {
    const { tenant, records, written, find } = await setUp(30);
    const gone = written.slice(0, 12);
    for (const r of gone) expect(await records.delete(tenant, r.id)).not.toBeNull();
    // The index has not heard of the deletes.
    expect((await index.search.search(tenant, { text: parseQuery('zephyr'), limit: 100 })).length).toBe(30);
    const hits = await find(10);
    expect(hits).toHaveLength(10);
    for (const r of gone) expect(hits).not.toContain(r.id);
    expect((await find(100)).sort()).toEqual(written.slice(12).map((r) => r.id).sort());
  });

  test('a large forget answers with a job, and what it matched is hidden from every read from then on, until the job deletes it', async () => {
    const { tenant, records, written, find, sink } = await setUp(SYNC_MAX + 11);
    const even = written.filter((r) => r.agent_id === 'even');
    const other = written.filter((r) => r.agent_id === 'odd');
    const outcome = await records.forget(tenant, { type: 'fact' }, { dryRun: false, at: new Date() });
    expect(outcome).toEqual({ kind: 'job', job_id: expect.any(String), matched: written.length });
    const jobId = (outcome as { job_id: string }).job_id;
    expect(sink.waiting).toEqual([{ tenant_id: tenant, job_id: jobId }]);
    expect(await records.forgetJob(tenant, jobId)).toEqual({ status: 'running', matched: written.length, deleted: 0 });
    // Not deleted yet, and hidden from get, list, search and delete alike.
    expect(await records.get(tenant, even[0]!.id)).toBeNull();
    expect(await records.get(tenant, other[0]!.id)).toBeNull();
    expect(await records.list(tenant, { filters: {}, order: 'desc', limit: 50 })).toEqual([]);
    expect(await find()).toEqual([]);
    expect(await records.delete(tenant, even[1]!.id)).toBeNull();
    // A record written after the forget is not its business.
    const later = newRecord(tenant, { ...input, title: 'later zephyr' }, new Date(Date.now() + 5));
    await records.create(tenant, later, { recordQuota: 10_000, month: '2026-11' });
    expect(await records.get(tenant, later.id)).toEqual(later);

    // The worker runs (twice: SQS delivers at least once); the count is exact.
    const first = await records.runForgetJob(tenant, jobId);
    expect(first).toEqual({ status: 'done', matched: written.length, deleted: written.length - 1 });
    expect(await records.runForgetJob(tenant, jobId)).toEqual(first);
    expect(await records.list(tenant, { filters: {}, order: 'asc', limit: 50 })).toEqual([later]);
    expect(await find()).toEqual([]);
  });

  test('a forget job by ids hides and deletes the named records whatever their created_at, imported ones dated after today included', async () => {
    const { tenant, records, written } = await setUp(SYNC_MAX + 2);
    const future = [1, 2, 3].map((days) => newRecord(tenant, { ...input, title: `future zephyr ${days}` }, new Date(Date.now() + days * 86_400_000)));
    expect(await records.import(tenant, future)).toMatchObject({ imported: 3 });
    const named = [...written, ...future];
    const outcome = await records.forget(tenant, { ids: named.map((r) => r.id) }, { dryRun: false, at: new Date() });
    expect(outcome).toEqual({ kind: 'job', job_id: expect.any(String), matched: named.length });
    const jobId = (outcome as { job_id: string }).job_id;
    for (const r of future) expect(await records.get(tenant, r.id)).toBeNull();
    expect(await records.list(tenant, { filters: {}, order: 'desc', limit: 100 })).toEqual([]);

    expect(await records.runForgetJob(tenant, jobId)).toEqual({ status: 'done', matched: named.length, deleted: named.length });
    for (const r of future) expect(await records.stored(tenant, r.id)).toBeNull();
  });

  test("a job's running item, which every read queries, lives as long as the job runs; its job item stays for the status route, 30 days", async () => {
    const { tenant, records, written } = await setUp(2 * SYNC_MAX + 4); // each agent's half is a job
    /** How many of the tenant's items in the tenants table have sort keys starting with `prefix`. */
    const items = async (prefix: string) =>
      (
        await t.client.send(
          new QueryCommand({
            TableName: t.names.tenants,
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
            ExpressionAttributeValues: { ':pk': { S: `tenant#${tenant}` }, ':prefix': { S: prefix } },
            Select: 'COUNT',
            ConsistentRead: true,
          }),
        )
      ).Count;
    const first = (await records.forget(tenant, { agent_id: 'even' }, { dryRun: false, at: new Date() })) as { job_id: string };
    const second = (await records.forget(tenant, { agent_id: 'odd' }, { dryRun: false, at: new Date() })) as { job_id: string };
    expect([await items('forget-running#'), await items('forget#')]).toEqual([2, 2]);
    expect(await records.get(tenant, written[0]!.id)).toBeNull();

    await records.runForgetJob(tenant, first.job_id);
    expect([await items('forget-running#'), await items('forget#')]).toEqual([1, 2]);
    await records.failForgetJob(tenant, second.job_id, 'given up');
    expect([await items('forget-running#'), await items('forget#')]).toEqual([0, 2]);
    expect(await records.forgetJob(tenant, first.job_id)).toMatchObject({ status: 'done' });
    expect(await records.forgetJob(tenant, second.job_id)).toMatchObject({ status: 'failed', deleted: 0 });
    // Ended, each job item expires by TTL 30 days later.
    const month = Date.now() / 1000 + 30 * 86_400;
    for (const { job_id } of [first, second]) {
      const { Item } = await t.client.send(new GetItemCommand({ TableName: t.names.tenants, Key: { pk: { S: `tenant#${tenant}` }, sk: { S: `forget#${job_id}` } } }));
      expect(Math.abs(Number(Item!.ttl!.N) - month)).toBeLessThan(60);
    }
    // The failed job hides nothing any more: its records show again.
    const odd = written.find((r) => r.agent_id === 'odd')!;
    expect(await records.get(tenant, odd.id)).toEqual(odd);
  });

  test('the worker stops before its time is up: on an early delivery the job goes on at the next, on the last it is failed and what is left shows again', async () => {
    const { tenant, records, written, sink } = await setUp(SYNC_MAX + 40);
    const outcome = await records.forget(tenant, { type: 'fact' }, { dryRun: false, at: new Date() });
    const jobId = (outcome as { job_id: string }).job_id;
    const worker = createForgetWorker({ records, logger: new Logger({ logLevel: 'SILENT' }), maxReceives: 2 });
    const deliver = (receive: number, remainingMs: number) =>
      worker(
        { Records: [{ messageId: `m${receive}`, body: JSON.stringify(sink.waiting[0]), attributes: { ApproximateReceiveCount: String(receive) } }] } as never,
        { ...lambdaContext('forget-worker'), getRemainingTimeInMillis: () => remainingMs },
      );
    // Almost out of time from the start: one page, then it stops and the message comes back.
    expect((await deliver(1, 1000)).batchItemFailures).toHaveLength(1);
    const partway = await records.forgetJob(tenant, jobId);
    expect(partway).toMatchObject({ status: 'running', matched: written.length });
    expect(partway!.deleted).toBeGreaterThan(0);
    expect(partway!.deleted).toBeLessThan(written.length);
    // The last delivery, out of time too: the job is failed, and the records it did not delete are back.
    expect((await deliver(2, 1000)).batchItemFailures).toHaveLength(1);
    const failed = await records.forgetJob(tenant, jobId);
    expect(failed!.status).toBe('failed');
    const left = await records.list(tenant, { filters: {}, order: 'asc', limit: 2000 });
    expect(left.length).toBe(written.length - failed!.deleted);
  });

  test('a forget of at most its threshold of records finishes within the call, with no job', async () => {
    const { tenant, records, written, find, sink } = await setUp(8);
    expect(await records.forget(tenant, { agent_id: 'even' }, { dryRun: false, at: new Date() })).toEqual({ kind: 'done', matched: 4, deleted: 4 });
    expect(sink.waiting).toEqual([]);
    expect((await find()).sort()).toEqual(written.filter((r) => r.agent_id === 'odd').map((r) => r.id).sort());
  });
});
