import { Logger } from '@aws-lambda-powertools/logger';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createIndexerHandler } from '../../functions/indexer/handler.js';
import { lambdaContext } from '../../local/lambda-context.js';
import { StreamPoller, type StreamPollerOptions } from '../../local/stream-poller.js';
import { documentClient } from '../../shared/adapters/aws/dynamodb/client.js';
import { recordFromImage, recordKey, recordToItem } from '../../shared/adapters/aws/dynamodb/record-item.js';
import { SqliteDocumentIndex } from '../../shared/adapters/local/document-index.js';
import { openSqliteAdapters, type SqliteAdapters } from '../../shared/adapters/local/index.js';
import { parseQuery } from '../../shared/domain/query-parse.js';
import { newRecord, type Classification, type StoredRecord } from '../../shared/domain/record.js';
import { createTestTables, describeWithDynamoDb, type TestTables } from '../support/dynamodb.js';

const TENANT = '0193a000-0000-7000-8000-000000000001';
const OTHER = '0193a000-0000-7000-8000-000000000002';
const CLASSIFIED: Classification = { type: 'decision', confidence: 0.5, model: 'keyword-baseline-v1', classified_at: '2026-11-21T10:00:01.000Z' };

type Handler = StreamPollerOptions['handler'];

describeWithDynamoDb('stream poller on DynamoDB Local, feeding the real indexer', (endpoint) => {
  let tables: TestTables;
  let doc: DynamoDBDocumentClient;
  let dir: string;
  let adapters: SqliteAdapters;
  let indexer: Handler;
  let logger: Logger;
  let errors: { message: string; details: unknown }[];
  const pollers: StreamPoller[] = [];

  beforeEach(async () => {
    tables = await createTestTables(endpoint);
    doc = documentClient(tables.client);
    dir = mkdtempSync(join(tmpdir(), 'memory-stream-'));
    adapters = openSqliteAdapters(join(dir, 'memory.db'));
    logger = new Logger({ serviceName: 'memory', logLevel: 'SILENT' });
    errors = [];
    logger.error = (...args: unknown[]) => void errors.push({ message: String(args[0]), details: args[1] });
    const handler = createIndexerHandler({
      index: new SqliteDocumentIndex(adapters.db),
      jobs: adapters.jobs,
      recordFromImage,
      logger,
    });
    indexer = (event) => handler(event, lambdaContext('indexer'));
  });

  afterEach(async () => {
    await Promise.all(pollers.splice(0).map((p) => p.stop()));
    adapters.close();
    rmSync(dir, { recursive: true, force: true });
    await tables.drop();
  });

  function startPoller(options: Partial<StreamPollerOptions> = {}): StreamPoller {
    const poller = new StreamPoller({
      config: { region: 'us-east-1', dynamodbEndpoint: endpoint },
      tableName: tables.names.records,
      handler: indexer,
      logger,
      ...options,
    });
    pollers.push(poller);
    poller.start();
    return poller;
  }

  function record(title: string, tenant = TENANT): StoredRecord {
    return newRecord(tenant, { agent_id: 'bot', type: 'fact', title, body: `${title}, in the body` }, new Date());
  }

  const put = (r: StoredRecord) => doc.send(new PutCommand({ TableName: tables.names.records, Item: recordToItem(r) }));
  const classify = (r: StoredRecord) =>
    doc.send(
      new UpdateCommand({
        TableName: tables.names.records,
        Key: recordKey(r.tenant_id, r.id),
        UpdateExpression: 'SET classification = :c',
        ExpressionAttributeValues: { ':c': CLASSIFIED },
      }),
    );
  const search = (q: string, tenant = TENANT) => adapters.search.search(tenant, { text: parseQuery(q), limit: 20 });
  const jobsPerRecord = () =>
    Object.fromEntries(
      adapters.db
        .prepare('SELECT record_id, count(*) AS n FROM classification_jobs GROUP BY record_id')
        .all()
        .map((row) => [(row as { record_id: string }).record_id, (row as { n: number }).n]),
    );
  /** A handler that records every batch it is given, then hands it to `inner`. */
  const recording = (inner: Handler) => {
    const batches: string[][] = [];
    const handler: Handler = (event) => {
      batches.push(event.Records.map((r) => recordFromImage((r.dynamodb!.NewImage ?? r.dynamodb!.OldImage)!).title));
      return inner(event);
    };
    return { batches, handler };
  };

  test('records become searchable, a classification MODIFY shows, a REMOVE drops them, one job per INSERT', async () => {
    const a = record('dark mode preference');
    const b = record('dark room booking');
    const c = record('dark chocolate', OTHER);
    const poller = startPoller();
    await Promise.all([put(a), put(b), put(c)]);
    await poller.settle();

    expect((await search('dark')).map((h) => h.id).sort()).toEqual([a.id, b.id].sort());
    expect((await search('dark', OTHER)).map((h) => h.id)).toEqual([c.id]);
    expect(jobsPerRecord()).toEqual({ [a.id]: 1, [b.id]: 1, [c.id]: 1 });

    await classify(a);
    await poller.settle();
    const hits = await search('preference');
    expect(hits).toHaveLength(1);
    expect(hits[0]!.classification).toEqual(CLASSIFIED);
    expect(hits[0]!.type).toBe('fact');
    expect(jobsPerRecord()).toEqual({ [a.id]: 1, [b.id]: 1, [c.id]: 1 });

    await doc.send(new DeleteCommand({ TableName: tables.names.records, Key: recordKey(b.tenant_id, b.id) }));
    await poller.settle();
    expect((await search('dark')).map((h) => h.id)).toEqual([a.id]);
    expect(errors).toEqual([]);
  });

  test('a first record whose sequence number skips ahead of an empty shard is still delivered', async () => {
    // DynamoDB Local numbers stream records across all tables, so writes elsewhere (here a transaction's
    // other items) leave a gap; an iterator taken on the empty shard then reports TrimmedDataAccessException.
    const poller = startPoller();
    await poller.settle();
    for (let i = 0; i < 3; i++) {
      await doc.send(new PutCommand({ TableName: tables.names.usage, Item: { tenant_id: TENANT, month: `2026-0${i + 1}`, records: 1 } }));
    }
    const a = record('gap after empty shard');
    await put(a);
    await poller.settle();
    expect((await search('gap')).map((h) => h.id)).toEqual([a.id]);
    expect(errors).toEqual([]);
  });

  test('a restart replays the retained stream from TRIM_HORIZON and leaves the index as it was', async () => {
    const a = record('dark mode');
    const first = startPoller();
    await put(a);
    await classify(a);
    await first.settle();
    await first.stop();

    const replay = recording(indexer);
    const second = startPoller({ handler: replay.handler });
    await second.settle();
    // The INSERT and the MODIFY came again; the index still holds one copy, with the classification.
    expect(replay.batches.flat()).toEqual(['dark mode', 'dark mode']);
    const hits = await search('dark');
    expect(hits.map((h) => [h.id, h.classification])).toEqual([[a.id, CLASSIFIED]]);
  });

  test('delivers Lambda-shaped events: version, source, region, stream ARN, images per event name', async () => {
    const events: DynamoDBStreamEvent[] = [];
    const poller = startPoller({ handler: async (event) => void events.push(event) });
    const a = record('shape');
    const before = Math.floor(Date.now() / 1000);
    await put(a);
    await classify(a);
    await doc.send(new DeleteCommand({ TableName: tables.names.records, Key: recordKey(a.tenant_id, a.id) }));
    await poller.settle();

    const { Table } = await tables.client.send(new DescribeTableCommand({ TableName: tables.names.records }));
    const records: DynamoDBRecord[] = events.flatMap((e) => e.Records);
    expect(records.map((r) => r.eventName)).toEqual(['INSERT', 'MODIFY', 'REMOVE']);
    for (const r of records) {
      expect(r).toMatchObject({ eventVersion: '1.1', eventSource: 'aws:dynamodb', awsRegion: 'us-east-1', eventSourceARN: Table!.LatestStreamArn });
      expect(typeof r.eventID).toBe('string');
      expect(r.dynamodb!.Keys).toEqual({ pk: { S: recordKey(a.tenant_id, a.id).pk }, id: { S: a.id } });
      expect(r.dynamodb!.SequenceNumber).toMatch(/^\d+$/);
      expect(r.dynamodb!.SizeBytes).toBeGreaterThan(0);
      expect(r.dynamodb!.StreamViewType).toBe('NEW_AND_OLD_IMAGES');
      // Epoch seconds; DynamoDB Local rounds the time down, to the minute.
      expect(Number.isInteger(r.dynamodb!.ApproximateCreationDateTime)).toBe(true);
      expect(r.dynamodb!.ApproximateCreationDateTime).toBeGreaterThan(before - 120);
      expect(r.dynamodb!.ApproximateCreationDateTime).toBeLessThanOrEqual(Date.now() / 1000);
    }
    const [ins, mod, rem] = records;
    expect(Object.keys(ins!.dynamodb!).includes('OldImage')).toBe(false);
    expect(recordFromImage(ins!.dynamodb!.NewImage!)).toEqual(a);
    expect(recordFromImage(mod!.dynamodb!.OldImage!)).toEqual(a);
    expect(recordFromImage(mod!.dynamodb!.NewImage!)).toEqual({ ...a, classification: CLASSIFIED });
    expect(Object.keys(rem!.dynamodb!).includes('NewImage')).toBe(false);
    expect(recordFromImage(rem!.dynamodb!.OldImage!)).toEqual({ ...a, classification: CLASSIFIED });
  });

  test('batches hold at most batchSize records, in stream order', async () => {
    const written = Array.from({ length: 7 }, (_, i) => record(`batch record ${i}`));
    for (const r of written) await put(r);
    const seen = recording(indexer);
    const poller = startPoller({ handler: seen.handler, batchSize: 3 });
    await poller.settle();
    expect(seen.batches).toEqual([written.slice(0, 3), written.slice(3, 6), written.slice(6)].map((b) => b.map((r) => r.title)));
    expect((await search('batch')).length).toBe(7);
  });

  test('a record the handler reports failed is delivered again, from the lowest failure onward, then succeeds', async () => {
    const [a, x, b] = [record('alpha first'), record('xray failing'), record('bravo after')];
    for (const r of [a, x, b]) await put(r);
    let failedOnce = false;
    const seen = recording(async (event) => {
      const target = event.Records.find((r) => recordFromImage(r.dynamodb!.NewImage!).id === x.id);
      if (failedOnce || !target) return indexer(event);
      // The first time: index the others, report the one record as failed.
      failedOnce = true;
      const response = (await indexer({ Records: event.Records.filter((r) => r !== target) })) as DynamoDBBatchResponse;
      return { batchItemFailures: [...response.batchItemFailures, { itemIdentifier: target.dynamodb!.SequenceNumber! }] };
    });
    const poller = startPoller({ handler: seen.handler, retryBackoffMs: 20 });
    await poller.settle();

    expect(seen.batches).toEqual([
      ['alpha first', 'xray failing', 'bravo after'],
      ['xray failing', 'bravo after'],
    ]);
    expect((await search('alpha xray bravo')).map((h) => h.id).sort()).toEqual([a.id, x.id, b.id].sort());
    // At least once: the failed record is queued once; a record after it was delivered (and queued) again.
    expect(jobsPerRecord()).toEqual({ [a.id]: 1, [x.id]: 1, [b.id]: 2 });
  });

  test('after its last retry a failing record goes to the on-failure destination and the shard moves on', async () => {
    const [a, x] = [record('alpha kept'), record('xray poison')];
    await put(a);
    await put(x);
    const seen = recording(async (event) => {
      const response = (await indexer(event)) as DynamoDBBatchResponse;
      const poison = event.Records.filter((r) => recordFromImage(r.dynamodb!.NewImage!).id === x.id);
      return { batchItemFailures: [...response.batchItemFailures, ...poison.map((r) => ({ itemIdentifier: r.dynamodb!.SequenceNumber! }))] };
    });
    const poller = startPoller({ handler: seen.handler, maxRetries: 2, retryBackoffMs: 10 });
    await poller.settle();

    expect(seen.batches).toEqual([['alpha kept', 'xray poison'], ['xray poison'], ['xray poison']]);
    const sent = errors.filter((e) => /on-failure destination/.test(e.message));
    expect(sent).toHaveLength(1);
    expect(sent[0]!.details).toMatchObject({ batch_size: 1, retries: 2, records: [{ event_name: 'INSERT', keys: { id: { S: x.id } } }] });

    const c = record('charlie later');
    await put(c);
    await poller.settle();
    expect((await search('charlie')).map((h) => h.id)).toEqual([c.id]);
    expect(seen.batches.at(-1)).toEqual(['charlie later']);
  });

  test('measures the lag from Put to searchable (default 200 ms poll interval)', async () => {
    const poller = startPoller();
    await poller.settle();
    const lags: number[] = [];
    for (let i = 0; i < 20; i++) {
      const r = record(`lagprobe${i} measurement`);
      const started = performance.now();
      await put(r);
      while ((await search(`lagprobe${i}`)).length === 0) {
        if (performance.now() - started > 5000) throw new Error(`record ${i} not searchable after 5 s`);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      lags.push(performance.now() - started);
      // Space the writes out, so each one lands at a random point of the poll cycle, as real traffic would.
      await new Promise((resolve) => setTimeout(resolve, 37 * (i % 7)));
    }
    const sorted = [...lags].sort((x, y) => x - y);
    const median = (sorted[9]! + sorted[10]!) / 2;
    console.log(
      `stream lag, Put to searchable, ${lags.length} writes: median ${median.toFixed(0)} ms, ` +
        `min ${sorted[0]!.toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms`,
    );
    expect(median).toBeLessThan(1000);
  });
});
