import { SendMessageBatchCommand, SQSClient, type SendMessageBatchCommandInput } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { classificationMessageSchema } from '../../functions/classifier/handler.js';
import { SqsJobSink } from '../../shared/adapters/aws/sqs/job-sink.js';
import type { ClassificationJob } from '../../shared/ports.js';

const QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/classification';
const sqs = mockClient(SQSClient);
const sink = () => new SqsJobSink(new SQSClient({ region: 'us-east-1' }), QUEUE_URL);

const jobs = (n: number): ClassificationJob[] =>
  Array.from({ length: n }, (_, i) => ({ tenant_id: 'tenant-1', record_id: `record-${i}` }));

/** Answers every batch as fully sent. */
const allSent = (input: SendMessageBatchCommandInput) => ({
  Successful: (input.Entries ?? []).map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}`, MD5OfMessageBody: 'x' })),
  Failed: [],
});

const sentInputs = () => sqs.commandCalls(SendMessageBatchCommand).map((call) => call.args[0].input);

beforeEach(() => sqs.reset());

describe('SQS job sink', () => {
  test('sends one batch with one message per job, its body what the classifier parses', async () => {
    sqs.on(SendMessageBatchCommand).callsFake(allSent);
    expect(await sink().enqueue(jobs(2))).toEqual([null, null]);
    expect(sentInputs()).toEqual([
      {
        QueueUrl: QUEUE_URL,
        Entries: [
          { Id: '0', MessageBody: '{"tenant_id":"tenant-1","record_id":"record-0"}' },
          { Id: '1', MessageBody: '{"tenant_id":"tenant-1","record_id":"record-1"}' },
        ],
      },
    ]);
    for (const entry of sentInputs()[0]!.Entries!) {
      expect(classificationMessageSchema.parse(JSON.parse(entry.MessageBody!))).toEqual({ tenant_id: 'tenant-1', record_id: expect.any(String) });
    }
  });

  test('splits 23 jobs into batches of 10, 10 and 3, with Ids unique within each batch', async () => {
    sqs.on(SendMessageBatchCommand).callsFake(allSent);
    expect(await sink().enqueue(jobs(23))).toEqual(Array(23).fill(null));
    const inputs = sentInputs();
    expect(inputs.map((i) => i.Entries!.length)).toEqual([10, 10, 3]);
    for (const input of inputs) expect(new Set(input.Entries!.map((e) => e.Id)).size).toBe(input.Entries!.length);
    const bodies = inputs.flatMap((i) => i.Entries!.map((e) => JSON.parse(e.MessageBody!) as ClassificationJob));
    expect(bodies).toEqual(jobs(23));
  });

  test('sends the batches concurrently', async () => {
    let inFlight = 0;
    let most = 0;
    sqs.on(SendMessageBatchCommand).callsFake(async (input: SendMessageBatchCommandInput) => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 20));
      inFlight--;
      return allSent(input);
    });
    await sink().enqueue(jobs(30));
    expect(most).toBe(3);
  });

  test('maps Failed entries back to the position of their job', async () => {
    sqs
      .on(SendMessageBatchCommand)
      .callsFakeOnce(allSent)
      .callsFakeOnce((input: SendMessageBatchCommandInput) => ({
        Successful: input.Entries!.filter((e) => e.Id !== '2').map((e) => ({ Id: e.Id, MessageId: 'm', MD5OfMessageBody: 'x' })),
        Failed: [{ Id: '2', SenderFault: false, Code: 'InternalError', Message: 'try again' }],
      }));
    const result = await sink().enqueue(jobs(13));
    expect(result.filter((r) => r !== null)).toHaveLength(1);
    expect(result[12]).toBe('SQS refused the message: InternalError (try again)');
  });

  test('a batch whose call throws fails all of its jobs and only them', async () => {
    sqs.on(SendMessageBatchCommand).callsFake(async (input: SendMessageBatchCommandInput) => {
      if (input.Entries![0]!.MessageBody!.includes('"record-10"')) throw new Error('network down');
      return allSent(input);
    });
    const result = await sink().enqueue(jobs(15));
    expect(result.slice(0, 10)).toEqual(Array(10).fill(null));
    expect(result.slice(10)).toEqual(Array(5).fill('SendMessageBatch failed: network down'));
  });

  test('an entry SQS neither sent nor failed counts as not sent', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [{ Id: '0', MessageId: 'm', MD5OfMessageBody: 'x' }], Failed: [] });
    expect(await sink().enqueue(jobs(2))).toEqual([null, 'SQS did not report the message as sent']);
  });

  test('no jobs, no call', async () => {
    expect(await sink().enqueue([])).toEqual([]);
    expect(sentInputs()).toEqual([]);
  });
});
