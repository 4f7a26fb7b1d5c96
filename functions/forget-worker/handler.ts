import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { z } from 'zod';
import type { ForgetJobRunner } from '../../shared/ports.js';

export interface ForgetWorkerDeps {
  records: ForgetJobRunner;
  logger: Logger;
  /** The queue's maxReceiveCount: on that delivery a failure is final, and the job is marked failed. */
  maxReceives: number;
}

/** How long before the Lambda timeout the worker stops a job's deletes, to report instead of being killed. */
const STOP_MARGIN_MS = 30_000;

/** The body of a forget job's message. */
export const forgetMessageSchema = z.object({ tenant_id: z.string().min(1), job_id: z.string().min(1) });

/**
 * The forget worker: for each message, deletes what the job matches and marks it done
 * (ForgetJobRunner.runForgetJob, which is safe to run again). A failure comes back through SQS; on the
 * last delivery the job is marked failed before the message goes to the dead-letter queue, whose alarm
 * tells the operator. The records stay hidden while a job runs, and come back if it fails.
 */
export function createForgetWorker({ records, logger, maxReceives }: ForgetWorkerDeps) {
  const processor = new BatchProcessor(EventType.SQS);

  /** The time left of the current invocation, in ms. */
  let remaining = () => Infinity;

  const runOne = async (message: SQSRecord): Promise<void> => {
    const job = forgetMessageSchema.parse(JSON.parse(message.body));
    try {
      // It stops with time to spare rather than be killed at the Lambda timeout, so that even on the last
      // delivery the job is marked failed instead of left running; what it deleted stays deleted.
      const status = await records.runForgetJob(job.tenant_id, job.job_id, { stop: () => remaining() < STOP_MARGIN_MS });
      if (!status) logger.warn('forget job not found; skipping', job);
      else logger.info('forget job finished', { ...job, ...status });
    } catch (error) {
      const last = Number(message.attributes.ApproximateReceiveCount) >= maxReceives;
      logger.error('forget job failed', { ...job, final: last, error: error as Error });
      if (last) await records.failForgetJob(job.tenant_id, job.job_id, error instanceof Error ? error.message : String(error));
      throw error;
    }
  };

  return middy<SQSEvent, SQSBatchResponse>()
    .use(injectLambdaContext(logger))
    .handler(async (event, context) => {
      remaining = () => context.getRemainingTimeInMillis();
      return processPartialResponse(event, runOne, processor, { context, throwOnFullBatchFailure: false });
    });
}
