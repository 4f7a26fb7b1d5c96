import type { Logger } from '@aws-lambda-powertools/logger';
import type { SQSEvent } from 'aws-lambda';
import { createForgetWorker } from '../functions/forget-worker/handler.js';
import type { ForgetJobSink } from '../shared/adapters/aws/dynamodb/forget-jobs.js';
import type { DynamoDbRecordStore } from '../shared/adapters/aws/dynamodb/record-store.js';
import { lambdaContext } from './lambda-context.js';

/** Deliveries of one job before it is marked failed, as the forget queue's maxReceiveCount on AWS. */
const MAX_RECEIVES = 3;

/**
 * The forget queue of the AWS-shaped local mode: a job starts in this process, soon after the 202, through
 * the real forget worker handler with an SQS-shaped event; a failed delivery is tried again a second later,
 * up to MAX_RECEIVES times, as SQS would. `idle()` waits for every job started so far.
 */
export function inProcessForgetJobs(records: () => DynamoDbRecordStore, logger: Logger): ForgetJobSink & { idle(): Promise<void> } {
  let worker: ReturnType<typeof createForgetWorker> | undefined;
  const running = new Set<Promise<void>>();
  const deliver = async (job: { tenant_id: string; job_id: string }) => {
    worker ??= createForgetWorker({ records: records(), logger: logger.createChild(), maxReceives: MAX_RECEIVES });
    for (let receive = 1; receive <= MAX_RECEIVES; receive++) {
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
      if (result.batchItemFailures.length === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  };
  return {
    async start(job) {
      const run = new Promise<void>((resolve) => setImmediate(resolve)).then(() => deliver(job));
      running.add(run);
      void run.finally(() => running.delete(run)).catch((error: unknown) => logger.error('forget job delivery failed', { error: error as Error }));
    },
    async idle() {
      await Promise.allSettled([...running]);
    },
  };
}
