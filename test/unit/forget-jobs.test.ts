import { Logger } from '@aws-lambda-powertools/logger';
import { expect, test } from '@jest/globals';
import { inProcessForgetJobs } from '../../local/forget-jobs.js';

/**
 * The forget queue of the AWS-shaped local mode (local/forget-jobs.ts) delivers each job to the real forget
 * worker as SQS would: soon after it starts, several at once, again after a failure up to the queue's
 * maxReceiveCount (3), and then the worker marks it failed. The record store here only counts and fails on
 * demand: the DynamoDB side of a forget job is the port suite's (test/ports/dynamodb-specific.test.ts).
 */

const logger = new Logger({ serviceName: 'memory', logLevel: 'SILENT' });
const status = { status: 'done' as const, matched: 1, deleted: 1 };

/** A record store whose runForgetJob fails the first `failures` times for a job, or waits for `gate`. */
function store({ failures = 0, gate }: { failures?: number; gate?: Promise<void> } = {}) {
  const runs: string[] = [];
  const failed: string[] = [];
  return {
    runs,
    failed,
    records: {
      runForgetJob: async (_tenant: string, jobId: string) => {
        runs.push(jobId);
        if (runs.filter((j) => j === jobId).length <= failures) throw new Error('throttled');
        if (gate && jobId === 'slow') await gate;
        return status;
      },
      failForgetJob: async (_tenant: string, jobId: string) => void failed.push(jobId),
    },
  };
}

test('a job is delivered soon after it starts, and idle waits for it', async () => {
  const s = store();
  const jobs = inProcessForgetJobs(() => s.records, logger);
  await jobs.start({ tenant_id: 't', job_id: 'a' });
  expect(s.runs).toEqual([]); // never inside the call
  await jobs.idle();
  expect(s.runs).toEqual(['a']);
  await jobs.stop();
});

test('a failed delivery comes again, up to three receives, and then the job is marked failed', async () => {
  const s = store({ failures: 5 });
  const jobs = inProcessForgetJobs(() => s.records, logger, { random: () => 0 });
  await jobs.start({ tenant_id: 't', job_id: 'a' });
  await jobs.idle();
  expect(s.runs).toEqual(['a', 'a', 'a']);
  expect(s.failed).toEqual(['a']);
  await jobs.stop();
});

test('a job that fails once succeeds on its second receive, after its backoff', async () => {
  const s = store({ failures: 1 });
  // The jitter fixed at 0.3 of the first retry's ceiling (1 s): a wait of 300 ms, which the job waits, and
  // with room to spare on a slow machine before the bound (a random jitter near 1 s would leave 0.5 s).
  const jobs = inProcessForgetJobs(() => s.records, logger, { random: () => 0.3 });
  const started = Date.now();
  await jobs.start({ tenant_id: 't', job_id: 'a' });
  await jobs.idle();
  expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  expect(Date.now() - started).toBeLessThan(1500);
  expect(s.runs).toEqual(['a', 'a']);
  expect(s.failed).toEqual([]);
  await jobs.stop();
});

test('a long job does not hold up the one started after it', async () => {
  let release: () => void = () => undefined;
  const s = store({ gate: new Promise<void>((resolve) => (release = resolve)) });
  const jobs = inProcessForgetJobs(() => s.records, logger);
  await jobs.start({ tenant_id: 't', job_id: 'slow' });
  await new Promise((resolve) => setTimeout(resolve, 10));
  await jobs.start({ tenant_id: 't', job_id: 'quick' });
  const deadline = Date.now() + 2000;
  while (!s.runs.includes('quick') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(s.runs).toEqual(['slow', 'quick']);
  release();
  await jobs.idle();
  await jobs.stop();
});

test('stop waits for the deliveries under way, and a job started after it is not delivered', async () => {
  let release: () => void = () => undefined;
  const s = store({ gate: new Promise<void>((resolve) => (release = resolve)) });
  const jobs = inProcessForgetJobs(() => s.records, logger);
  await jobs.start({ tenant_id: 't', job_id: 'slow' });
  await new Promise((resolve) => setTimeout(resolve, 10));
  let stopped = false;
  const stopping = jobs.stop().then(() => (stopped = true));
  await new Promise((resolve) => setTimeout(resolve, 10));
  expect(stopped).toBe(false);
  release();
  await stopping;
  await jobs.start({ tenant_id: 't', job_id: 'late' });
  await jobs.idle();
  expect(s.runs).toEqual(['slow']);
});
