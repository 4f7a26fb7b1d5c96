import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type {
  AttributeValue,
  DynamoDBBatchItemFailure,
  DynamoDBBatchResponse,
  DynamoDBRecord,
  DynamoDBStreamEvent,
} from 'aws-lambda';
import { REQUIRED_FIELDS } from '../../shared/domain/record-schema.js';
import type { StoredRecord } from '../../shared/domain/record.js';
import type { ClassificationJob, DocumentIndex, IndexChange, JobSink } from '../../shared/ports.js';

export interface IndexerDeps {
  /** The write side of the search index. */
  index: DocumentIndex;
  /** Where the classification job of each new record, and of each record whose text an update changed, goes. */
  jobs: JobSink;
  /** Decodes a stream image into the domain record (the records table's item codec). */
  recordFromImage: (image: Record<string, AttributeValue>) => StoredRecord;
  logger: Logger;
}

/** One stream record, decoded: what the index must do, and whether its text is new and must be classified. */
interface Decoded {
  change: IndexChange;
  classify: boolean;
}

/** What a log line may say about a record: its identity and the event, never its text. */
interface RecordRef {
  sequence_number: string | undefined;
  event_name: string | undefined;
  record_id?: string | undefined;
  tenant_id?: string | undefined;
}

/** Whether a field every record has is there: the version a whole number from 1, any other a non-empty string. */
function present(record: StoredRecord, field: (typeof REQUIRED_FIELDS)[number]): boolean {
  const value = record[field];
  return field === 'version' ? Number.isInteger(value) && (value as number) >= 1 : typeof value === 'string' && value !== '';
}

/**
 * Decodes one stream record into its index change. INSERT and MODIFY carry the record in NewImage and
 * upsert it; REMOVE deletes by the tenant and id of OldImage (the table's stream view is
 * NEW_AND_OLD_IMAGES, so a REMOVE and a MODIFY always have one). Throws with the reason when the record
 * cannot be used.
 */
function decode(record: DynamoDBRecord, recordFromImage: IndexerDeps['recordFromImage']): Decoded {
  const { eventName, dynamodb } = record;
  if (eventName === 'INSERT' || eventName === 'MODIFY') {
    if (!dynamodb?.NewImage) throw new Error(`${eventName} without a NewImage`);
    const decoded = recordFromImage(dynamodb.NewImage);
    const missing = REQUIRED_FIELDS.filter((field) => !present(decoded, field));
    if (missing.length > 0) throw new Error(`NewImage lacks ${missing.join(', ')}`);
    if (eventName === 'INSERT') {
      // An imported record that carries its classification keeps it; every other new record is classified.
      return { change: { kind: 'upsert', record: decoded }, classify: decoded.classification === null };
    }
    // A new title or body (an update) is classified again; a new classification or superseded_by is not,
    // so the classifier's own write never queues another job. Without the old image nothing is queued.
    const old = dynamodb.OldImage ? recordFromImage(dynamodb.OldImage) : null;
    return { change: { kind: 'upsert', record: decoded }, classify: old !== null && (old.title !== decoded.title || old.body !== decoded.body) };
  }
  if (eventName === 'REMOVE') {
    // The sort key alone names the record but not its tenant; the old image has both.
    const image = dynamodb?.OldImage;
    if (!image) throw new Error('REMOVE without an OldImage (the stream view must be NEW_AND_OLD_IMAGES)');
    const { tenant_id, id } = recordFromImage(image);
    if (typeof tenant_id !== 'string' || typeof id !== 'string' || !tenant_id || !id) {
      throw new Error('OldImage lacks tenant_id or id');
    }
    return { change: { kind: 'delete', tenant_id, id }, classify: false };
  }
  throw new Error(`unknown event name ${String(eventName)}`);
}

function refOf(record: DynamoDBRecord, decoded?: Decoded): RecordRef {
  const ref: RecordRef = { sequence_number: record.dynamodb?.SequenceNumber, event_name: record.eventName };
  if (decoded) {
    const { change } = decoded;
    ref.record_id = change.kind === 'upsert' ? change.record.id : change.id;
    ref.tenant_id = change.kind === 'upsert' ? change.record.tenant_id : change.tenant_id;
  } else {
    // An undecodable record is still named by its key, so the failure can be traced to the item.
    const id = record.dynamodb?.Keys?.id?.S;
    if (id !== undefined) ref.record_id = id;
  }
  return ref;
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The indexer: follows the records table's stream into the search index and queues the classification of
 * each new record. One `index.apply` and at most one `jobs.enqueue` per batch. Every record whose decode,
 * index write or enqueue failed is reported by its SequenceNumber as a batch item failure, so the event
 * source mapping retries from the lowest failure while the other records' work stands; replays are
 * harmless because index writes are idempotent by record id and classifying twice only rewrites the
 * suggestion. Every MODIFY is re-indexed; only one that changed the title or body (an update) is classified
 * again, never the classifier's own write or a supersede.
 */
export function createIndexerHandler({ index, jobs, recordFromImage, logger }: IndexerDeps) {
  const handle = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
    const failed = new Map<DynamoDBRecord, { ref: RecordRef; reason: string }>();
    const fail = (record: DynamoDBRecord, ref: RecordRef, reason: string) => {
      if (!failed.has(record)) failed.set(record, { ref, reason });
    };

    const decoded: { record: DynamoDBRecord; item: Decoded }[] = [];
    for (const record of event.Records) {
      try {
        decoded.push({ record, item: decode(record, recordFromImage) });
      } catch (error) {
        fail(record, refOf(record), `undecodable stream record: ${reasonOf(error)}`);
      }
    }

    let results: (string | null | undefined)[];
    try {
      results = decoded.length === 0 ? [] : await index.apply(decoded.map((d) => d.item.change));
    } catch (error) {
      // The index refused the whole batch: nothing is known to be written, so every record is retried.
      results = decoded.map(() => `index write failed: ${reasonOf(error)}`);
    }

    const toClassify: { record: DynamoDBRecord; ref: RecordRef; job: ClassificationJob }[] = [];
    decoded.forEach(({ record, item }, i) => {
      const ref = refOf(record, item);
      const result = results[i];
      if (result !== null) {
        fail(record, ref, result === undefined ? 'index returned no result for the change' : `index: ${result}`);
      } else if (item.classify && item.change.kind === 'upsert') {
        toClassify.push({ record, ref, job: { tenant_id: item.change.record.tenant_id, record_id: item.change.record.id } });
      }
    });

    if (toClassify.length > 0) {
      let queued: (string | null | undefined)[];
      try {
        queued = await jobs.enqueue(toClassify.map((c) => c.job));
      } catch (error) {
        queued = toClassify.map(() => `enqueue failed: ${reasonOf(error)}`);
      }
      toClassify.forEach(({ record, ref }, i) => {
        const result = queued[i];
        if (result !== null) fail(record, ref, result === undefined ? 'job sink returned no result' : `classification job: ${result}`);
      });
    }

    const batchItemFailures: DynamoDBBatchItemFailure[] = [];
    for (const record of event.Records) {
      const failure = failed.get(record);
      if (!failure) continue;
      logger.error('stream record failed; the event source mapping will retry it', { ...failure.ref, reason: failure.reason });
      // An empty identifier makes Lambda fail the whole batch, the only safe answer without a sequence number.
      batchItemFailures.push({ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' });
    }
    logger.debug('stream batch indexed', {
      records: event.Records.length,
      failed: batchItemFailures.length,
      classification_jobs: toClassify.length,
    });
    return { batchItemFailures };
  };

  return middy<DynamoDBStreamEvent, DynamoDBBatchResponse>().use(injectLambdaContext(logger)).handler(handle);
}
