import type { Logger } from '@aws-lambda-powertools/logger';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { BackgroundLoop } from '../shared/adapters/local/background-loop.js';
import { backoffDelay, MAX_RETRY_WAIT_MS, type Backoff } from '../shared/adapters/local/backoff.js';
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

/** The wait before a failed job's next attempt: up to 1 s, then 2 s, 4 s…, at most a minute (backoff.ts). */
const JOB_RETRY: Backoff = { baseMs: 1000, capMs: MAX_RETRY_WAIT_MS };

/**
 * Plays the SQS event source mapping for the classifier: it claims stored jobs, hands them to the worker
 * as an SQS batch, deletes the ones that succeeded and puts the failures back with a backoff. A job that
 * keeps failing is parked as dead after `maxAttempts`, as a DLQ would hold it.
 *
 * Its passes run in a background loop (background-loop.ts): every `pollMs`, or at once after a full batch.
 * A pass that fails is logged with the jobs it held, and the loop backs off; the leases run out and the
 * jobs come back, so nothing is lost.
 */
export class JobLoop {
  private readonly loop: BackgroundLoop;
  private readonly batchSize: number;
  private readonly leaseMs: number;
  private readonly maxAttempts: number;
  /** The jobs the pass in flight (or the last one) claimed, for the log line of a pass that fails. */
  private claimed: ClaimedJob[] = [];

  constructor(private readonly options: JobLoopOptions) {
    this.batchSize = options.batchSize ?? 10;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.maxAttempts = options.maxAttempts ?? 5;
    this.loop = new BackgroundLoop({
      name: 'classification',
      logger: options.logger,
      context: () => ({ queue: 'classification', job_ids: this.claimed.map((j) => j.jobId) }),
      backoff: { baseMs: options.pollMs, capMs: MAX_RETRY_WAIT_MS },
      // A full batch suggests more are waiting: go again at once rather than after a poll interval.
      pass: async () => ((await this.pass()) ? 0 : options.pollMs),
    });
  }

  /** Starts polling; a second call does nothing. */
  start(): void {
    this.loop.start();
  }

  /** Stops polling and waits for the pass in progress, if any. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One pass: claim, run, acknowledge. Resolves to true when it found a full batch; rejects when a step failed. */
  async pass(): Promise<boolean> {
    const { jobs, worker, logger } = this.options;
    this.claimed = [];
    const claimed = await jobs.claim(this.batchSize, this.leaseMs);
    this.claimed = claimed;
    if (claimed.length === 0) return false;
    const response = await worker(toSqsEvent(claimed), lambdaContext('classifier'));
    const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    await jobs.complete(claimed.filter((j) => !failed.has(j.jobId)).map((j) => j.jobId));
    for (const job of claimed.filter((j) => failed.has(j.jobId))) {
      await jobs.retry(job.jobId, 'classifier reported a batch item failure', backoffDelay(job.attempts, JOB_RETRY), this.maxAttempts);
      logger.warn('classification job failed; will retry', { job_id: job.jobId, record_id: job.record_id, attempts: job.attempts });
    }
    return claimed.length === this.batchSize;
  }
}
