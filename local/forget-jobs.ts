import type { Logger } from '@aws-lambda-powertools/logger';
import type { SQSEvent } from 'aws-lambda';
import { createForgetWorker } from '../functions/forget-worker/handler.js';
import type { ForgetJobSink } from '../shared/adapters/aws/dynamodb/forget-jobs.js';
import type { DynamoDbRecordStore } from '../shared/adapters/aws/dynamodb/record-store.js';
import { BackgroundLoop, UNTIL_WOKEN } from '../shared/adapters/local/background-loop.js';
import { backoffDelay, MAX_RETRY_WAIT_MS, type Backoff } from '../shared/adapters/local/backoff.js';
import { lambdaContext } from './lambda-context.js';

/** Deliveries of one job before it is marked failed, as the forget queue's maxReceiveCount on AWS. */
const MAX_RECEIVES = 3;

/** The wait before a failed delivery comes again: up to 1 s, then up to 2 s (backoff.ts). */
const REDELIVERY: Backoff = { baseMs: 1000, capMs: MAX_RETRY_WAIT_MS };

type ForgetJob = { tenant_id: string; job_id: string };

/** A job's next delivery: its receive count, and when it is due. */
interface Delivery {
  job: ForgetJob;
  receive: number;
  dueAt: number;
}

/** The forget queue of the local runtime, with what its owner needs to shut it down. */
export interface InProcessForgetJobs extends ForgetJobSink {
  /** Resolves once every job started so far has been delivered for the last time. */
  idle(): Promise<void>;
  /** Stops delivering and waits for the deliveries under way; a retry not yet due is dropped. */
  stop(): Promise<void>;
}

/**
 * The forget queue of the AWS-shaped local mode: a job starts in this process, soon after the 202, through
 * the real forget worker handler with an SQS-shaped event, one job per event and several at once, as
 * SQS with a batch size of 1 invokes the worker; a failed delivery comes again after a backoff, up to
 * MAX_RECEIVES times. A background loop (background-loop.ts), started with the first job, hands each due
 * delivery to the worker and sleeps until the next retry is due, or until a job arrives. `random` fixes
 * the backoff's jitter, for tests.
 */
export function inProcessForgetJobs(
  records: () => Pick<DynamoDbRecordStore, 'runForgetJob' | 'failForgetJob'>,
  logger: Logger,
  { random }: { random?: () => number } = {},
): InProcessForgetJobs {
  let worker: ReturnType<typeof createForgetWorker> | undefined;
  const queue: Delivery[] = [];
  const running = new Set<Promise<void>>();
  const idleWaiters: (() => void)[] = [];
  const settled = () => {
    if (queue.length === 0 && running.size === 0) for (const resolve of idleWaiters.splice(0)) resolve();
  };

  const deliver = async ({ job, receive }: Delivery) => {
    worker ??= createForgetWorker({ records: records(), logger: logger.createChild(), maxReceives: MAX_RECEIVES });
    const event = {
      Records: [
        {
          messageId: `${job.job_id}-${receive}`,
          body: JSON.stringify(job),
          attributes: { ApproximateReceiveCount: String(receive) },
          eventSource: 'aws:sqs',
        },
      ],
    } as unknown as SQSEvent;
    const result = await worker(event, lambdaContext('forget-worker'));
    if (result.batchItemFailures.length === 0 || receive >= MAX_RECEIVES) return;
    queue.push({ job, receive: receive + 1, dueAt: Date.now() + backoffDelay(receive, REDELIVERY, random) });
    loop.wake();
  };

  const loop = new BackgroundLoop({
    name: 'forget jobs',
    logger,
    // Hands over what is due without waiting for it: a long forget does not hold up the jobs behind it.
    pass: () => {
      const now = Date.now();
      for (const delivery of queue.filter((d) => d.dueAt <= now)) {
        queue.splice(queue.indexOf(delivery), 1);
        const run: Promise<void> = deliver(delivery)
          .catch((error: unknown) => logger.error('forget job delivery failed', { job_id: delivery.job.job_id, error: error as Error }))
          .finally(() => {
            running.delete(run);
            settled();
          });
        running.add(run);
      }
      return queue.length === 0 ? UNTIL_WOKEN : Math.max(0, Math.min(...queue.map((d) => d.dueAt)) - Date.now());
    },
  });

  return {
    async start(job) {
      // After stop, nothing delivers it: the job stays queued in its table, as a message nobody receives.
      if (loop.state === 'stopping' || loop.state === 'stopped') return;
      queue.push({ job, receive: 1, dueAt: 0 });
      loop.start();
      loop.wake();
    },
    idle() {
      return new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        settled();
      });
    },
    async stop() {
      await loop.stop();
      await Promise.allSettled([...running]);
      queue.length = 0;
      settled();
    },
  };
}
