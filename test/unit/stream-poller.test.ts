import { Logger } from '@aws-lambda-powertools/logger';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  TrimmedDataAccessException,
  type _Record as StreamsRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { StreamPoller, type StreamPollerOptions } from '../../local/stream-poller.js';

/**
 * What DynamoDB Local cannot be made to do on demand: close a shard and open its child, lose an iterator,
 * fail a call. These cases mock the SDK at its boundary; test/e2e/stream-poller.test.ts runs the rest for real.
 */
const STREAM_ARN = 'arn:aws:dynamodb:us-east-1:000000000000:table/records/stream/2026-11-21T00:00:00.000';
const tables = mockClient(DynamoDBClient);
const streams = mockClient(DynamoDBStreamsClient);

function change(seq: number): StreamsRecord {
  const sequence = String(seq).padStart(21, '0');
  return {
    eventID: `e${seq}`,
    eventName: 'INSERT',
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'ddblocal',
    dynamodb: {
      ApproximateCreationDateTime: new Date('2026-11-21T10:00:00.000Z'),
      Keys: { id: { S: `r${seq}` } },
      NewImage: { id: { S: `r${seq}` }, data: { B: new Uint8Array([1, 2, 3]) } },
      SequenceNumber: sequence,
      SizeBytes: 20,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  };
}

let delivered: string[][];
let errors: { message: string; details: unknown }[];
let poller: StreamPoller | undefined;

function start(options: Partial<StreamPollerOptions> = {}): StreamPoller {
  const logger = new Logger({ serviceName: 'memory', logLevel: 'SILENT' });
  logger.error = (...args: unknown[]) => void errors.push({ message: String(args[0]), details: args[1] });
  poller = new StreamPoller({
    config: { region: 'us-east-1', dynamodbEndpoint: 'http://127.0.0.1:1' },
    tableName: 'records',
    logger,
    handler: async (event: DynamoDBStreamEvent) => void delivered.push(event.Records.map((r) => r.dynamodb!.Keys!.id!.S!)),
    pollIntervalMs: 5,
    retryBackoffMs: 5,
    ...options,
  });
  poller.start();
  return poller;
}

beforeEach(() => {
  tables.reset();
  streams.reset();
  delivered = [];
  errors = [];
  tables.on(DescribeTableCommand).resolves({ Table: { TableName: 'records', LatestStreamArn: STREAM_ARN } });
  streams.on(GetShardIteratorCommand).callsFake((input) => ({ ShardIterator: `${input.ShardId}@${input.ShardIteratorType}` }));
});

afterEach(async () => {
  await poller?.stop();
  poller = undefined;
});

describe('stream poller, against a mocked stream', () => {
  test('reads a parent shard to its end before its child, even when the child is listed first', async () => {
    streams.on(DescribeStreamCommand).resolves({
      StreamDescription: { Shards: [{ ShardId: 'child', ParentShardId: 'parent' }, { ShardId: 'parent' }] },
    });
    streams
      .on(GetRecordsCommand, { ShardIterator: 'parent@TRIM_HORIZON' }).resolves({ Records: [change(1), change(2)], NextShardIterator: 'parent-2' })
      .on(GetRecordsCommand, { ShardIterator: 'parent-2' }).resolves({ Records: [change(3)] })
      .on(GetRecordsCommand, { ShardIterator: 'child@TRIM_HORIZON' }).resolves({ Records: [change(4)], NextShardIterator: 'child-2' })
      .on(GetRecordsCommand, { ShardIterator: 'child-2' }).resolves({ Records: [], NextShardIterator: 'child-2' });
    await start().settle(2000);
    expect(delivered).toEqual([['r1', 'r2'], ['r3'], ['r4']]);
    const iterators = streams.commandCalls(GetShardIteratorCommand).map((c) => c.args[0].input.ShardId);
    expect(iterators).toEqual(['parent', 'child']);
    expect(errors).toEqual([]);
  });

  test('shapes records as the Lambda event carries them: binary as base64, time in epoch seconds', async () => {
    const events: DynamoDBStreamEvent[] = [];
    streams.on(DescribeStreamCommand).resolves({ StreamDescription: { Shards: [{ ShardId: 's' }] } });
    streams.on(GetRecordsCommand).resolves({ Records: [change(1)], NextShardIterator: 'done' }).on(GetRecordsCommand, { ShardIterator: 'done' }).resolves({ Records: [], NextShardIterator: 'done' });
    await start({ handler: async (event) => void events.push(event) }).settle(2000);
    expect(events).toEqual([
      {
        Records: [
          {
            eventID: 'e1',
            eventName: 'INSERT',
            eventVersion: '1.1',
            eventSource: 'aws:dynamodb',
            awsRegion: 'us-east-1',
            eventSourceARN: STREAM_ARN,
            dynamodb: {
              ApproximateCreationDateTime: Date.parse('2026-11-21T10:00:00.000Z') / 1000,
              Keys: { id: { S: 'r1' } },
              NewImage: { id: { S: 'r1' }, data: { B: 'AQID' } },
              SequenceNumber: '000000000000000000001',
              SizeBytes: 20,
              StreamViewType: 'NEW_AND_OLD_IMAGES',
            },
          },
        ],
      },
    ]);
  });

  test('a failing call is logged with its shard id, and the next pass carries on', async () => {
    streams.on(DescribeStreamCommand).resolves({ StreamDescription: { Shards: [{ ShardId: 's' }] } });
    streams
      .on(GetRecordsCommand, { ShardIterator: 's@TRIM_HORIZON' })
      .rejectsOnce(new Error('connection reset'))
      .resolves({ Records: [change(1)], NextShardIterator: 'idle' })
      .on(GetRecordsCommand, { ShardIterator: 'idle' })
      .resolves({ Records: [], NextShardIterator: 'idle' });
    await start().settle(2000);
    expect(delivered).toEqual([['r1']]);
    expect(errors).toEqual([{ message: 'stream shard poll failed', details: expect.objectContaining({ shard_id: 's' }) }]);
  });

  test('an expired iterator is replaced by one after the last delivered record', async () => {
    streams.on(DescribeStreamCommand).resolves({ StreamDescription: { Shards: [{ ShardId: 's' }] } });
    streams
      .on(GetRecordsCommand, { ShardIterator: 's@TRIM_HORIZON' }).resolves({ Records: [change(1)], NextShardIterator: 'stale' })
      .on(GetRecordsCommand, { ShardIterator: 'stale' }).rejects(new ExpiredIteratorException({ message: 'expired', $metadata: {} }))
      .on(GetRecordsCommand, { ShardIterator: 's@AFTER_SEQUENCE_NUMBER' }).resolves({ Records: [change(2)], NextShardIterator: 'idle' })
      .on(GetRecordsCommand, { ShardIterator: 'idle' }).resolves({ Records: [], NextShardIterator: 'idle' });
    await start().settle(2000);
    expect(delivered).toEqual([['r1'], ['r2']]);
    const after = streams.commandCalls(GetShardIteratorCommand).map((c) => c.args[0].input).find((i) => i.ShardIteratorType === 'AFTER_SEQUENCE_NUMBER');
    expect(after).toMatchObject({ ShardId: 's', SequenceNumber: '000000000000000000001' });
  });

  test('a trimmed iterator rewinds to TRIM_HORIZON and skips the records already delivered', async () => {
    streams.on(DescribeStreamCommand).resolves({ StreamDescription: { Shards: [{ ShardId: 's' }] } });
    let horizonReads = 0;
    streams
      .on(GetRecordsCommand, { ShardIterator: 's@TRIM_HORIZON' })
      .callsFake(() => (++horizonReads === 1 ? { Records: [change(1)], NextShardIterator: 'gone' } : { Records: [change(1), change(2)], NextShardIterator: 'idle' }))
      .on(GetRecordsCommand, { ShardIterator: 'gone' }).rejects(new TrimmedDataAccessException({ message: 'trimmed', $metadata: {} }))
      .on(GetRecordsCommand, { ShardIterator: 'idle' }).resolves({ Records: [], NextShardIterator: 'idle' });
    await start().settle(2000);
    expect(delivered).toEqual([['r1'], ['r2']]);
    expect(streams.commandCalls(GetShardIteratorCommand).map((c) => c.args[0].input.ShardIteratorType)).toEqual(['TRIM_HORIZON', 'TRIM_HORIZON']);
    expect(errors).toEqual([]);
  });

  test('a handler that throws fails the whole batch, which comes again', async () => {
    streams.on(DescribeStreamCommand).resolves({ StreamDescription: { Shards: [{ ShardId: 's' }] } });
    streams.on(GetRecordsCommand).resolves({ Records: [change(1), change(2)], NextShardIterator: 'idle' }).on(GetRecordsCommand, { ShardIterator: 'idle' }).resolves({ Records: [], NextShardIterator: 'idle' });
    let calls = 0;
    await start({
      handler: async (event) => {
        delivered.push(event.Records.map((r) => r.dynamodb!.Keys!.id!.S!));
        if (++calls === 1) throw new Error('function error');
      },
    }).settle(2000);
    expect(delivered).toEqual([['r1', 'r2'], ['r1', 'r2']]);
  });

  test('an unknown itemIdentifier fails the whole batch, as Lambda treats it', async () => {
    streams.on(DescribeStreamCommand).resolves({ StreamDescription: { Shards: [{ ShardId: 's' }] } });
    streams.on(GetRecordsCommand).resolves({ Records: [change(1), change(2)], NextShardIterator: 'idle' }).on(GetRecordsCommand, { ShardIterator: 'idle' }).resolves({ Records: [], NextShardIterator: 'idle' });
    let calls = 0;
    await start({
      handler: async (event) => {
        delivered.push(event.Records.map((r) => r.dynamodb!.Keys!.id!.S!));
        return { batchItemFailures: ++calls === 1 ? [{ itemIdentifier: '' }] : [] };
      },
    }).settle(2000);
    expect(delivered).toEqual([['r1', 'r2'], ['r1', 'r2']]);
  });

  test('settle rejects when the poller is not running, and when it cannot settle in time', async () => {
    const idle = new StreamPoller({
      config: { region: 'us-east-1' },
      tableName: 'records',
      logger: new Logger({ logLevel: 'SILENT' }),
      handler: async () => undefined,
    });
    await expect(idle.settle(10)).rejects.toThrow(/not running/);
    await idle.stop();
    streams.on(DescribeStreamCommand).rejects(new Error('stream unavailable'));
    await expect(start().settle(100)).rejects.toThrow(/did not settle within 100 ms/);
  });
});
