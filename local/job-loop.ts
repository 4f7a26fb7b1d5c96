import type { Logger } from '@aws-lambda-powertools/logger';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { ClaimedJob, JobQueue } from '../shared/ports.js';
import { lambdaContext } from './lambda-context.js';

export interface JobLoopOptions {
  jobs: JobQueue;
  /** The `classifier` Lambda handler. */
  worker: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;
  logger: Logger;
  pollMs: number;
  batchSize?: number;
  leaseMs?: number;
  maxAttempts?: number;
}

const SQS_ARN = 'arn:aws:sqs:local:000000000000:classification';

/** Wraps claimed jobs as the SQS event the classifier Lambda receives from its event source mapping. */
function toSqsEvent(jobs: ClaimedJob[]): SQSEvent {
  return {
    Records: jobs.map((job) => ({
      messageId: job.jobId,
      receiptHandle: job.jobId,
      body: JSON.stringify({ tenant_id: job.tenant_id, record_id: job.record_id }),
      attributes: {
        ApproximateReceiveCount: String(job.attempts),
        SentTimestamp: String(Date.now()),
        SenderId: 'local',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: SQS_ARN,
      awsRegion: 'local',
    })),
  };
}

/**
 * Plays the SQS event source mapping for the classifier: it claims stored jobs, hands them to the worker
 * as an SQS batch, deletes the ones that succeeded and puts the failures back with a backoff. A job that
 * keeps failing is parked as dead after `maxAttempts`, as a DLQ would hold it.
 *
 * States: idle (waiting for the next poll) -> running (one pass) -> idle, or -> stopped. A pass never
 * throws: it logs its own failure with the job ids, so one bad pass cannot stop the loop.
 */
export class JobLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly batchSize: number;
  private readonly leaseMs: number;
  private readonly maxAttempts: number;

  constructor(private readonly options: JobLoopOptions) {
    this.batchSize = options.batchSize ?? 10;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.maxAttempts = options.maxAttempts ?? 5;
  }

  /** Starts polling. */
  start(): void {
    this.schedule(0);
  }

  /** Stops polling and waits for the pass in progress, if any. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.pass().then((full) => {
        this.running = undefined;
        // A full batch suggests more are waiting: go again at once rather than after a poll interval.
        this.schedule(full ? 0 : this.options.pollMs);
      });
    }, delayMs);
  }

  /** One pass: claim, run, acknowledge. Resolves to true when it found a full batch. */
  async pass(): Promise<boolean> {
    const { jobs, worker, logger } = this.options;
    let claimed: ClaimedJob[] = [];
    try {
      claimed = await jobs.claim(this.batchSize, this.leaseMs);
      if (claimed.length === 0) return false;
      const response = await worker(toSqsEvent(claimed), lambdaContext('classifier'));
      const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
      await jobs.complete(claimed.filter((j) => !failed.has(j.jobId)).map((j) => j.jobId));
      for (const job of claimed.filter((j) => failed.has(j.jobId))) {
        const delayMs = Math.min(60_000, 1000 * 2 ** (job.attempts - 1));
        await jobs.retry(job.jobId, 'classifier reported a batch item failure', delayMs, this.maxAttempts);
        logger.warn('classification job failed; will retry', { job_id: job.jobId, record_id: job.record_id, attempts: job.attempts });
      }
      return claimed.length === this.batchSize;
    } catch (error) {
      // The leases run out and the jobs come back, so nothing is lost; log which jobs were in flight.
      logger.error('classification pass failed', { queue: 'classification', job_ids: claimed.map((j) => j.jobId), error: error as Error });
      return false;
    }
  }
}
