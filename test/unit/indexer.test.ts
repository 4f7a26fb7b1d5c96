import { Logger } from '@aws-lambda-powertools/logger';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { createIndexerHandler } from '../../functions/indexer/handler.js';
import { recordFromImage, recordKey, recordToItem } from '../../shared/adapters/aws/dynamodb/record-item.js';
import { newRecord, type StoredRecord } from '../../shared/domain/record.js';
import type { ClassificationJob, DocumentIndex, IndexChange, JobSink } from '../../shared/ports.js';
import { lambdaContext } from '../../local/lambda-context.js';

const TENANT = '0193a000-0000-7000-8000-000000000001';
const STREAM_ARN = 'arn:aws:dynamodb:us-east-1:000000000000:table/records/stream/2026-11-21T00:00:00.000';

let seq = 0;
const at = new Date('2026-11-21T10:00:00.000Z');

function record(title: string, overrides: Partial<StoredRecord> = {}): StoredRecord {
  return { ...newRecord(TENANT, { agent_id: 'bot', type: 'fact', title, body: `${title} body` }, at), ...overrides };
}

function image(r: StoredRecord): Record<string, AttributeValue> {
  return marshall(recordToItem(r), { removeUndefinedValues: true }) as Record<string, AttributeValue>;
}

function streamRecord(
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE',
  images: { newImage?: Record<string, AttributeValue>; oldImage?: Record<string, AttributeValue>; id: string },
): DynamoDBRecord {
  const sequenceNumber = String(++seq).padStart(21, '0');
  return {
    eventID: `event-${sequenceNumber}`,
    eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    eventSourceARN: STREAM_ARN,
    dynamodb: {
      ApproximateCreationDateTime: Math.floor(at.getTime() / 1000),
      Keys: marshall(recordKey(TENANT, images.id)) as Record<string, AttributeValue>,
      ...(images.newImage ? { NewImage: images.newImage } : {}),
      ...(images.oldImage ? { OldImage: images.oldImage } : {}),
      SequenceNumber: sequenceNumber,
      SizeBytes: 100,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  };
}

const insert = (r: StoredRecord) => streamRecord('INSERT', { newImage: image(r), id: r.id });
const modify = (before: StoredRecord, after: StoredRecord) =>
  streamRecord('MODIFY', { newImage: image(after), oldImage: image(before), id: after.id });
const remove = (r: StoredRecord) => streamRecord('REMOVE', { oldImage: image(r), id: r.id });
const sequenceOf = (r: DynamoDBRecord) => r.dynamodb!.SequenceNumber!;

/** In-memory ports that record every call and fail what they are told to. */
function fakes() {
  const applyCalls: IndexChange[][] = [];
  const enqueueCalls: ClassificationJob[][] = [];
  const failIndexFor = new Set<string>();
  const failJobFor = new Set<string>();
  let applyThrows = false;
  let enqueueThrows = false;
  const index: DocumentIndex = {
    apply: async (changes) => {
      applyCalls.push(changes);
      if (applyThrows) throw new Error('index unavailable');
      return changes.map((c) => (failIndexFor.has(c.kind === 'upsert' ? c.record.id : c.id) ? 'mapping rejected' : null));
    },
  };
  const jobs: JobSink = {
    enqueue: async (batch) => {
      enqueueCalls.push(batch);
      if (enqueueThrows) throw new Error('queue unavailable');
      return batch.map((j) => (failJobFor.has(j.record_id) ? 'throttled' : null));
    },
  };
  const logger = new Logger({ serviceName: 'memory', logLevel: 'SILENT' });
  const handler = createIndexerHandler({ index, jobs, recordFromImage, logger });
  return {
    applyCalls,
    enqueueCalls,
    failIndexFor,
    failJobFor,
    logger,
    throwOnApply: () => (applyThrows = true),
    throwOnEnqueue: () => (enqueueThrows = true),
    run: (records: DynamoDBRecord[]) => handler({ Records: records } as DynamoDBStreamEvent, lambdaContext('indexer')),
  };
}

describe('indexer handler', () => {
  test('INSERT upserts the record and queues one classification job', async () => {
    const f = fakes();
    const r = record('dark mode');
    expect(await f.run([insert(r)])).toEqual({ batchItemFailures: [] });
    expect(f.applyCalls).toEqual([[{ kind: 'upsert', record: r }]]);
    expect(f.enqueueCalls).toEqual([[{ tenant_id: TENANT, record_id: r.id }]]);
  });

  test('MODIFY re-indexes the record with its classification and queues no job', async () => {
    const f = fakes();
    const before = record('dark mode');
    const after = { ...before, classification: { type: 'fact' as const, confidence: 0.4, model: 'm', classified_at: at.toISOString() } };
    expect(await f.run([modify(before, after)])).toEqual({ batchItemFailures: [] });
    expect(f.applyCalls).toEqual([[{ kind: 'upsert', record: after }]]);
    expect(f.enqueueCalls).toEqual([]);
  });

  test('a MODIFY that changed the title or body (an update) re-indexes the record and queues its classification again', async () => {
    const f = fakes();
    const before = record('dark mode');
    const titled = { ...before, title: 'light mode', version: 2, updated_at: at.toISOString() };
    const bodied = { ...titled, body: 'now light', version: 3 };
    expect(await f.run([modify(before, titled), modify(titled, bodied)])).toEqual({ batchItemFailures: [] });
    expect(f.applyCalls).toEqual([[{ kind: 'upsert', record: titled }, { kind: 'upsert', record: bodied }]]);
    expect(f.enqueueCalls).toEqual([[{ tenant_id: TENANT, record_id: before.id }, { tenant_id: TENANT, record_id: before.id }]]);
  });

  test('a MODIFY of anything but the text (type, client, metadata, superseded_by) re-indexes and queues nothing; nor does one without an old image', async () => {
    const f = fakes();
    const before = record('dark mode');
    const retyped = { ...before, type: 'decision' as const, client: 'acme', metadata: { k: 1 }, version: 2, updated_at: at.toISOString() };
    const superseded = { ...retyped, superseded_by: '0193a000-0000-7000-8000-0000000000ff' };
    const noOld = streamRecord('MODIFY', { newImage: image({ ...superseded, title: 'changed' }), id: before.id });
    expect(await f.run([modify(before, retyped), modify(retyped, superseded), noOld])).toEqual({ batchItemFailures: [] });
    expect(f.applyCalls).toEqual([
      [
        { kind: 'upsert', record: retyped },
        { kind: 'upsert', record: superseded },
        { kind: 'upsert', record: { ...superseded, title: 'changed' } },
      ],
    ]);
    expect(f.enqueueCalls).toEqual([]);
  });

  test('an item from before versions (no version, updated_at or superseded_by) reads as version 1, current', async () => {
    const f = fakes();
    const r = record('old item');
    const { version: _v, updated_at: _u, superseded_by: _s, ...legacy } = recordToItem(r);
    const old = streamRecord('INSERT', { newImage: marshall(legacy) as Record<string, AttributeValue>, id: r.id });
    expect(await f.run([old])).toEqual({ batchItemFailures: [] });
    expect(f.applyCalls).toEqual([[{ kind: 'upsert', record: r }]]);
  });

  test('a version that is not a whole number from 1 is undecodable', async () => {
    const f = fakes();
    const r = record('bad version');
    const bad = streamRecord('INSERT', { newImage: marshall({ ...recordToItem(r), version: 0 }) as Record<string, AttributeValue>, id: r.id });
    expect((await f.run([bad])).batchItemFailures).toEqual([{ itemIdentifier: sequenceOf(bad) }]);
    expect(f.applyCalls).toEqual([]);
  });

  test('an INSERT that carries its classification (an imported record) is indexed with it and queues no job', async () => {
    const f = fakes();
    const imported = { ...record('dark mode'), classification: { type: 'decision' as const, confidence: 0.9, model: 'linear-v3', classified_at: at.toISOString() } };
    expect(await f.run([insert(imported)])).toEqual({ batchItemFailures: [] });
    expect(f.applyCalls).toEqual([[{ kind: 'upsert', record: imported }]]);
    expect(f.enqueueCalls).toEqual([]);
  });

  test('REMOVE deletes by the tenant and id of the old image', async () => {
    const f = fakes();
    const r = record('gone');
    expect(await f.run([remove(r)])).toEqual({ batchItemFailures: [] });
    expect(f.applyCalls).toEqual([[{ kind: 'delete', tenant_id: TENANT, id: r.id }]]);
    expect(f.enqueueCalls).toEqual([]);
  });

  test('a whole batch makes one apply call, in stream order, and one enqueue call for its INSERTs', async () => {
    const f = fakes();
    const a = record('a');
    const b = record('b');
    const aClassified = { ...a, classification: { type: 'decision' as const, confidence: 0.5, model: 'm', classified_at: at.toISOString() } };
    const batch = [insert(a), insert(b), modify(a, aClassified), remove(b)];
    expect(await f.run(batch)).toEqual({ batchItemFailures: [] });
    expect(f.applyCalls).toEqual([
      [
        { kind: 'upsert', record: a },
        { kind: 'upsert', record: b },
        { kind: 'upsert', record: aClassified },
        { kind: 'delete', tenant_id: TENANT, id: b.id },
      ],
    ]);
    expect(f.enqueueCalls).toEqual([
      [
        { tenant_id: TENANT, record_id: a.id },
        { tenant_id: TENANT, record_id: b.id },
      ],
    ]);
  });

  test('an undecodable record fails alone; the others are indexed and queued', async () => {
    const f = fakes();
    const a = record('a');
    const b = record('b');
    const broken = insert(record('broken'));
    broken.dynamodb!.NewImage = { pk: { S: `${TENANT}#1` }, id: { S: 'x' }, metadata: { S: '{not json' } };
    const noImage = streamRecord('INSERT', { id: 'y' });
    const batch = [insert(a), broken, noImage, insert(b)];
    expect(await f.run(batch)).toEqual({
      batchItemFailures: [{ itemIdentifier: sequenceOf(broken) }, { itemIdentifier: sequenceOf(noImage) }],
    });
    expect(f.applyCalls).toEqual([
      [
        { kind: 'upsert', record: a },
        { kind: 'upsert', record: b },
      ],
    ]);
    expect(f.enqueueCalls).toEqual([
      [
        { tenant_id: TENANT, record_id: a.id },
        { tenant_id: TENANT, record_id: b.id },
      ],
    ]);
  });

  test('an image without the record fields is undecodable, and so is a REMOVE without an old image', async () => {
    const f = fakes();
    const partial = streamRecord('INSERT', { newImage: { pk: { S: `${TENANT}#1` }, id: { S: 'x' } }, id: 'x' });
    const keysOnly = streamRecord('REMOVE', { id: 'x' });
    const result = await f.run([partial, keysOnly]);
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: sequenceOf(partial) }, { itemIdentifier: sequenceOf(keysOnly) }]);
    expect(f.applyCalls).toEqual([]);
    expect(f.enqueueCalls).toEqual([]);
  });

  test('a change the index refuses fails its record, which is not queued', async () => {
    const f = fakes();
    const a = record('a');
    const b = record('b');
    f.failIndexFor.add(a.id);
    const batch = [insert(a), insert(b)];
    expect(await f.run(batch)).toEqual({ batchItemFailures: [{ itemIdentifier: sequenceOf(batch[0]!) }] });
    expect(f.enqueueCalls).toEqual([[{ tenant_id: TENANT, record_id: b.id }]]);
  });

  test('a job the sink refuses fails its record only', async () => {
    const f = fakes();
    const a = record('a');
    const b = record('b');
    f.failJobFor.add(b.id);
    const batch = [insert(a), insert(b)];
    expect(await f.run(batch)).toEqual({ batchItemFailures: [{ itemIdentifier: sequenceOf(batch[1]!) }] });
    expect(f.applyCalls).toHaveLength(1);
    expect(f.enqueueCalls).toHaveLength(1);
  });

  test('an enqueue that throws fails every record of the batch it would have queued, not the other MODIFYs', async () => {
    const f = fakes();
    const a = record('a');
    const b = record('b');
    f.throwOnEnqueue();
    const classified = { ...b, classification: { type: 'fact' as const, confidence: 0.4, model: 'm', classified_at: at.toISOString() } };
    const batch = [insert(a), modify(b, classified), insert(b), modify(a, { ...a, title: 'a2', version: 2 })];
    expect(await f.run(batch)).toEqual({
      batchItemFailures: [{ itemIdentifier: sequenceOf(batch[0]!) }, { itemIdentifier: sequenceOf(batch[2]!) }, { itemIdentifier: sequenceOf(batch[3]!) }],
    });
  });

  test('an apply that throws fails every record, and nothing is queued', async () => {
    const f = fakes();
    f.throwOnApply();
    const batch = [insert(record('a')), modify(record('b'), record('b2')), remove(record('c'))];
    expect(await f.run(batch)).toEqual({ batchItemFailures: batch.map((r) => ({ itemIdentifier: sequenceOf(r) })) });
    expect(f.enqueueCalls).toEqual([]);
  });

  test('failures are logged with the record id, tenant, event and reason, never the text', async () => {
    const f = fakes();
    const secret = record('top secret title', { body: 'top secret body' });
    f.failIndexFor.add(secret.id);
    const calls: unknown[][] = [];
    f.logger.error = (...args: unknown[]) => void calls.push(args);
    const batch = [insert(secret)];
    await f.run(batch);
    expect(calls).toHaveLength(1);
    const [message, details] = calls[0]!;
    expect(message).toMatch(/failed/);
    expect(details).toEqual({
      sequence_number: sequenceOf(batch[0]!),
      event_name: 'INSERT',
      record_id: secret.id,
      tenant_id: TENANT,
      reason: 'index: mapping rejected',
    });
    expect(JSON.stringify(calls)).not.toMatch(/secret/);
  });

  test('an empty batch calls neither port', async () => {
    const f = fakes();
    expect(await f.run([])).toEqual({ batchItemFailures: [] });
    expect(f.applyCalls).toEqual([]);
    expect(f.enqueueCalls).toEqual([]);
  });
});
