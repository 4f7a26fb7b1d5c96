import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { z } from 'zod';
import type { Classifier, RecordStore } from '../../shared/ports.js';

export interface ClassifierWorkerDeps {
  records: Pick<RecordStore, 'get' | 'setClassification'>;
  classifier: Classifier;
  logger: Logger;
  now?: () => Date;
}

/** The body of a classification message. */
export const classificationMessageSchema = z.object({ tenant_id: z.string().min(1), record_id: z.string().min(1) });

/**
 * The classification worker: for each message of an SQS batch, loads the record, asks the classifier for
 * a suggestion and stores it beside the record (the record's `type` never changes). Messages that fail are
 * reported as batch item failures, so only they come back; a record that no longer exists is skipped.
 */
export function createClassifierWorker({ records, classifier, logger, now = () => new Date() }: ClassifierWorkerDeps) {
  const processor = new BatchProcessor(EventType.SQS);

  const classifyOne = async (message: SQSRecord): Promise<void> => {
    const job = classificationMessageSchema.parse(JSON.parse(message.body));
    const record = await records.get(job.tenant_id, job.record_id);
    if (!record) {
      logger.warn('record to classify not found; skipping', { ...job, message_id: message.messageId });
      return;
    }
    const suggestion = await classifier.classify(record);
    // For the version it read: an update meanwhile has queued a job for its own text.
    const classification = { type: suggestion.type, confidence: suggestion.confidence, model: suggestion.model, classified_at: now().toISOString() };
    await records.setClassification(job.tenant_id, job.record_id, classification, record.version);
  };

  return middy<SQSEvent, SQSBatchResponse>()
    .use(injectLambdaContext(logger))
    .handler(async (event, context) =>
      processPartialResponse(event, classifyOne, processor, { context, throwOnFullBatchFailure: false }),
    );
}
