import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type BatchGetCommandOutput,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { v7 as uuidv7 } from 'uuid';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { AppError } from '../../../domain/errors.js';
import { IDEMPOTENCY_TTL_MS, type IdempotencyClaim } from '../../../domain/idempotency.js';
import { matchesFilters, positionBefore, type ListRequest, type Position } from '../../../domain/listing.js';
import { receiptOf, type Classification, type StoredRecord } from '../../../domain/record.js';
import type {
  CreateRecordOptions,
  CreateRecordResult,
  DeletedRecord,
  ErasedCounts,
  ForgetJobRunner,
  ForgetJobStatus,
  ForgetOutcome,
  ForgetSelectors,
  ImportResult,
  RecordStore,
  UpdateRecordOptions,
} from '../../../ports.js';
import type { RecordPatch } from '../../../domain/schemas.js';
import { FORGET_SYNC_MAX, forgetMatches, ForgetJobs, type ForgetJobSink } from './forget-jobs.js';
import { recordFromItem, recordKey, recordToItem } from './record-item.js';
import { notSuperseded, supersedable, supersededFailure, supersedeItems, updateRecord } from './record-update.js';
import { scanAll } from './scan.js';
import { firstRecords, idPrefix, idRangeOf, shardKeys, shardRecords, type IdRange } from './shard-query.js';
import type { TableNames } from './tables.js';
import { batchDelete, conditionFailed, guarded, throttled, transactWrite } from './transact.js';
import { countUnderQuota } from './usage-meter.js';

/** The idempotency item: which record a key stored, for which request, until when. */
interface IdempotencyItem {
  pk: string;
  request_hash: string;
  record_id: string;
  created_at: string;
  /** Epoch milliseconds; the condition checks it, since TTL deletes only eventually. */
  expires_at: number;
  /** Epoch seconds, for DynamoDB TTL. */
  ttl: number;
}

/**
 * Records on DynamoDB. A write is one TransactWriteItems: the conditional ADD on the tenant's monthly
 * counter (its condition is the record quota), the Put of the record, with an Idempotency-Key the Put of
 * the key, and a conditional Update of each record it supersedes. Either all happen or none does. The
 * table's stream then carries the record to the search index and the classification queue, so a stored
 * record always reaches both; an update (record-update.ts) reaches them the same way.
 */
/** The tenant id of the key `ping` reads: not a UUID, so no tenant has it. */
const HEALTH_TENANT = '#health';

export class DynamoDbRecordStore implements RecordStore, ForgetJobRunner {
  private readonly jobs: ForgetJobs;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tables: Pick<TableNames, 'records' | 'usage' | 'idempotency' | 'tenants'>,
    private readonly clock: () => number = Date.now,
    private readonly forgetOptions: ForgetOptions = {},
  ) {
    this.jobs = new ForgetJobs(db, tables.tenants);
  }

  async create(tenantId: string, record: StoredRecord, options: CreateRecordOptions): Promise<CreateRecordResult> {
    const now = this.clock();
    const claim = options.idempotency;
    const supersedes = options.supersedes?.ids.length ? options.supersedes : undefined;
    if (supersedes) await supersedable(this.jobs, (ids) => this.fetch(tenantId, ids), tenantId, supersedes.ids);
    const outcome = await transactWrite(this.db, {
      TransactItems: [
        { Update: countUnderQuota(this.tables.usage, tenantId, options.month, 'records', options.recordQuota) },
        {
          Put: {
            TableName: this.tables.records,
            Item: recordToItem({ ...record, tenant_id: tenantId }),
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        ...(claim
          ? [
              {
                Put: {
                  TableName: this.tables.idempotency,
                  Item: this.idempotencyItem(tenantId, claim, record, now),
                  ConditionExpression: 'attribute_not_exists(pk) OR expires_at <= :now',
                  ExpressionAttributeValues: { ':now': now },
                  ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
                },
              },
            ]
          : []),
        ...(supersedes ? supersedeItems(this.tables.records, tenantId, record.id, supersedes) : []),
      ],
    });
    if (outcome.committed) return { receipt: receiptOf({ ...record, tenant_id: tenantId }), replayed: false };

    const [quota, put] = outcome.reasons;
    const key = claim ? outcome.reasons[2] : undefined;
    // An earlier write under the same key answers first, even when the quota has since run out, and
    // supersedes nothing: this transaction, the only one that could, was cancelled.
    if (claim && key?.Code === 'ConditionalCheckFailed') {
      const previous = await this.previousWrite(tenantId, claim, key.Item);
      if (previous) {
        if (previous.request_hash !== claim.requestHash) {
          throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used for a different request');
        }
        return { receipt: { id: previous.record_id, created_at: previous.created_at, tenant_id: tenantId }, replayed: true };
      }
    }
    // A record the write cannot supersede is the caller's mistake, whatever the quota says.
    const missing = supersedes && supersededFailure(supersedes.ids, outcome.reasons.slice(claim ? 3 : 2));
    if (missing) throw notSuperseded(missing);
    if (quota?.Code === 'ConditionalCheckFailed') {
      throw new AppError('record_quota_exceeded', 'The monthly record quota is used up');
    }
    // The key expired between the transaction and the read: the next attempt's condition lets it through.
    if (claim && key?.Code === 'ConditionalCheckFailed') return this.create(tenantId, record, options);
    throw new Error(
      `record write cancelled: ${outcome.reasons.map((r) => r.Code ?? 'None').join(', ')} (record put: ${put?.Code ?? 'None'})`,
    );
  }

  async update(tenantId: string, id: string, patch: RecordPatch, options: UpdateRecordOptions): Promise<StoredRecord | null> {
    return updateRecord({ db: this.db, table: this.tables.records, jobs: this.jobs, stored: (t, i) => this.stored(t, i) }, tenantId, id, patch, options);
  }

  /** One eventually consistent GetItem of a key no record has: the table answers, or this rejects. */
  async ping(): Promise<void> {
    await this.db.send(new GetCommand({ TableName: this.tables.records, Key: recordKey(HEALTH_TENANT, HEALTH_TENANT), ProjectionExpression: 'pk' }));
  }

  async get(tenantId: string, id: string): Promise<StoredRecord | null> {
    const [record, hidden] = await Promise.all([this.stored(tenantId, id), this.jobs.hidden(tenantId)]);
    return record && !hidden(record) ? record : null;
  }

  /**
   * The tenant's record with this id as the table holds it, one strongly consistent GetItem, whether or not
   * a running forget job hides it from reads: for the classification worker, which needs the text and
   * nothing else (a record a job takes is deleted soon, and its classification with it).
   */
  async stored(tenantId: string, id: string): Promise<StoredRecord | null> {
    const { Item } = await guarded(
      this.db.send(new GetCommand({ TableName: this.tables.records, Key: recordKey(tenantId, id), ConsistentRead: true })),
    );
    return Item && Item.tenant_id === tenantId ? recordFromItem(Item) : null;
  }

  /**
   * The tenant's records with these ids that can be read, by id, as the table holds them now: stored (strongly
   * consistent), and matched by no running forget job. The query handler checks its search hits with it, so
   * that a record deleted, updated or superseded while the search index has not caught up is never returned
   * as the index has it (docs/architecture.md, "Deletes on AWS", "Updates on AWS").
   */
  async readable(tenantId: string, ids: readonly string[]): Promise<Map<string, StoredRecord>> {
    const [stored, hidden] = await Promise.all([this.fetch(tenantId, ids), this.jobs.hidden(tenantId)]);
    return new Map(stored.filter((r) => !hidden(r)).map((r) => [r.id, r]));
  }

  async list(tenantId: string, request: ListRequest): Promise<StoredRecord[]> {
    const hidden = await this.jobs.hidden(tenantId);
    const { filters, order, after } = request;
    const range = idRangeOf(filters);
    // The cursor's record bounds the ids too (inclusive here; `keep` drops the record itself).
    if (after) {
      if (order === 'asc' && (range.from === undefined || after.id > range.from)) range.from = after.id;
      if (order === 'desc' && (range.to === undefined || after.id < range.to)) range.to = after.id;
    }
    const isAfter = (r: Position) => !after || (order === 'asc' ? positionBefore(after, r) : positionBefore(r, after));
    return firstRecords(
      this.db,
      this.tables.records,
      tenantId,
      {
        order,
        range,
        equals: { agent_id: filters.agent_id, type: filters.type, client: filters.client },
        keep: (r) => isAfter(r) && matchesFilters(r, filters) && !hidden(r),
      },
      request.limit,
    );
  }

  async forget(tenantId: string, selectors: ForgetSelectors, { dryRun, at }: { dryRun: boolean; at: Date }): Promise<ForgetOutcome> {
    const cutoff = at.toISOString();
    const hidden = await this.jobs.hidden(tenantId);
    // What a running job has taken is deleted as far as any caller can tell: it is not matched again.
    const matches = (r: StoredRecord) => forgetMatches(r, selectors, cutoff) && !hidden(r);
    const syncMax = this.forgetOptions.syncMax ?? FORGET_SYNC_MAX;
    const found: StoredRecord[] = [];
    let matched = 0;
    // The partitions side by side: a forget counts what it matches before it answers, in a large tenant too.
    await Promise.all(
      this.candidates(tenantId, selectors, cutoff).map(async (pages) => {
        for await (const page of pages) {
          for (const record of page) {
            if (!matches(record)) continue;
            matched++;
            if (matched <= syncMax) found.push(record);
          }
        }
      }),
    );
    if (dryRun) return { kind: 'done', matched, deleted: 0 };
    if (matched <= syncMax) return { kind: 'done', matched, deleted: await this.deleteEach(tenantId, found) };
    const sink = this.forgetOptions.jobs;
    if (!sink) return { kind: 'done', matched, deleted: await this.forgetAll(tenantId, selectors, cutoff) };
    const job_id = uuidv7({ msecs: at.getTime() });
    // Written before the 202: from then on every read hides what the job matched.
    await this.jobs.create({ job_id, tenant_id: tenantId, status: 'running', matched, deleted: 0, selectors, cutoff, created_at: cutoff });
    await sink.start({ tenant_id: tenantId, job_id });
    return { kind: 'job', job_id, matched };
  }

  async forgetJob(tenantId: string, jobId: string): Promise<ForgetJobStatus | null> {
    const job = await this.jobs.get(tenantId, jobId);
    return job && { status: job.status, matched: job.matched, deleted: Math.min(job.deleted, job.matched) };
  }

  /**
   * The forget worker's step: deletes what the job matches, counting as it goes, and marks it done. Safe to
   * run again on the same job (SQS delivers at least once): what is gone already is not counted twice.
   * `stop`, asked after each page, ends the step early with an error (the worker's time is nearly up).
   */
  async runForgetJob(tenantId: string, jobId: string, { stop = () => false }: { stop?: () => boolean } = {}): Promise<ForgetJobStatus | null> {
    const job = await this.jobs.get(tenantId, jobId);
    if (!job) return null;
    if (job.status === 'running') {
      await this.forgetAll(tenantId, job.selectors, job.cutoff, async (deleted) => {
        await this.jobs.counted(tenantId, jobId, deleted);
        if (stop()) throw new Error('stopped before the time limit; the next delivery goes on where this one stopped');
      });
      await this.jobs.finish(tenantId, jobId, { status: 'done' });
    }
    return this.forgetJob(tenantId, jobId);
  }

  /** Marks a job failed, with why: the worker does this once the queue will not deliver it again. */
  async failForgetJob(tenantId: string, jobId: string, error: string): Promise<void> {
    await this.jobs.finish(tenantId, jobId, { status: 'failed', error });
  }

  async import(tenantId: string, records: StoredRecord[]): Promise<ImportResult> {
    const result = { imported: 0, skipped: 0 };
    await eachLimited(records, 16, async (record) => {
      try {
        await this.db.send(
          new PutCommand({
            TableName: this.tables.records,
            Item: recordToItem({ ...record, tenant_id: tenantId }),
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
        result.imported++;
      } catch (error) {
        if (!conditionFailed(error)) throw throttled(error) ?? error;
        result.skipped++;
      }
    });
    return result;
  }

  /** Deletes every record of the tenant (the stream takes them out of the search index) and its idempotency keys. */
  async eraseTenant(tenantId: string, progress?: (line: string) => void): Promise<ErasedCounts> {
    let records = 0;
    for (const pk of shardKeys(tenantId)) {
      let start: Record<string, unknown> | undefined;
      do {
        const page = await guarded(
          this.db.send(
            new QueryCommand({
              TableName: this.tables.records,
              KeyConditionExpression: 'pk = :pk',
              ExpressionAttributeValues: { ':pk': pk },
              ProjectionExpression: 'pk, id',
              ExclusiveStartKey: start,
            }),
          ),
        );
        records += await batchDelete(this.db, this.tables.records, page.Items ?? []);
        start = page.LastEvaluatedKey;
        progress?.(`records: ${records} deleted`);
      } while (start);
    }
    // Idempotency keys are `<tenant>#<key>` and live 24 hours, so the table is small: a scan finds them.
    const keys = await guarded(
      scanAll<Record<string, unknown>>(this.db, {
        TableName: this.tables.idempotency,
        FilterExpression: 'begins_with(pk, :tenant)',
        ExpressionAttributeValues: { ':tenant': `${tenantId}#` },
        ProjectionExpression: 'pk',
      }),
    );
    const idempotency = await batchDelete(this.db, this.tables.idempotency, keys);
    return { records, idempotency_keys: idempotency };
  }

  /**
   * The records a forget may match, page by page, one sequence of pages per partition: the ids named, or the
   * tenant's records created before the cutoff that pass the equality selectors.
   */
  private candidates(tenantId: string, selectors: ForgetSelectors, cutoff: string): AsyncIterable<StoredRecord[]>[] {
    if (selectors.ids !== undefined) {
      const ids = selectors.ids;
      const fetch = () => this.fetch(tenantId, ids);
      return [(async function* () {
        yield await fetch();
      })()];
    }
    const before = selectors.before !== undefined && selectors.before < cutoff ? selectors.before : cutoff;
    const range: IdRange = { to: idPrefix(Date.parse(before)) };
    const equals = { agent_id: selectors.agent_id, type: selectors.type, client: selectors.client };
    return shardKeys(tenantId).map((pk) =>
      shardRecords(this.db, this.tables.records, pk, { order: 'asc', range, equals, keep: () => true, pageSize: 1000 }),
    );
  }

  /** Deletes what the selectors match, page by page, and reports each page's count. */
  private async forgetAll(
    tenantId: string,
    selectors: ForgetSelectors,
    cutoff: string,
    counted?: (deleted: number) => Promise<void>,
  ): Promise<number> {
    let deleted = 0;
    for (const pages of this.candidates(tenantId, selectors, cutoff)) {
      for await (const page of pages) {
        const gone = await this.deleteEach(tenantId, page.filter((r) => forgetMatches(r, selectors, cutoff)));
        deleted += gone;
        await counted?.(gone);
      }
    }
    return deleted;
  }

  /** Deletes records one conditional delete each, 16 at a time; counts those that were there to delete. */
  private async deleteEach(tenantId: string, records: readonly StoredRecord[]): Promise<number> {
    let deleted = 0;
    await eachLimited(records, 16, async (record) => {
      if (await this.deleteItem(tenantId, record.id)) deleted++;
    });
    return deleted;
  }

  /** The tenant's records with these ids, strongly consistent, in no particular order. */
  private async fetch(tenantId: string, ids: readonly string[]): Promise<StoredRecord[]> {
    const records: StoredRecord[] = [];
    for (let i = 0; i < ids.length; i += 100) {
      let keys: Record<string, unknown>[] | undefined = [...new Set(ids.slice(i, i + 100))].map((id) => recordKey(tenantId, id));
      while (keys && keys.length > 0) {
        const answer: BatchGetCommandOutput = await guarded(
          this.db.send(new BatchGetCommand({ RequestItems: { [this.tables.records]: { Keys: keys, ConsistentRead: true } } })),
        );
        for (const item of answer.Responses?.[this.tables.records] ?? []) if (item.tenant_id === tenantId) records.push(recordFromItem(item));
        keys = answer.UnprocessedKeys?.[this.tables.records]?.Keys;
      }
    }
    return records;
  }

  async delete(tenantId: string, id: string): Promise<DeletedRecord | null> {
    const [old, hidden] = await Promise.all([this.deleteItem(tenantId, id), this.jobs.hidden(tenantId)]);
    // A record a running forget job has matched is gone for every caller already: this delete finds nothing.
    if (!old || hidden(old)) return null;
    return { id, deleted_at: new Date(this.clock()).toISOString() };
  }

  /** Deletes the tenant's record with this id; returns it as it was, or null when there was none. */
  private async deleteItem(tenantId: string, id: string): Promise<StoredRecord | null> {
    try {
      // The condition names the tenant: another tenant's id, like an unknown one, deletes nothing.
      const { Attributes } = await this.db.send(
        new DeleteCommand({
          TableName: this.tables.records,
          Key: recordKey(tenantId, id),
          ConditionExpression: 'attribute_exists(pk) AND tenant_id = :tenant',
          ExpressionAttributeValues: { ':tenant': tenantId },
          ReturnValues: 'ALL_OLD',
        }),
      );
      return Attributes ? recordFromItem(Attributes) : null;
    } catch (error) {
      if (conditionFailed(error)) return null;
      throw throttled(error) ?? error;
    }
  }

  async setClassification(tenantId: string, id: string, classification: Classification, version?: number): Promise<boolean> {
    // The condition keeps a record that is gone from coming back as a bare classification item, and with a
    // version, a suggestion for a text an update has since replaced from landing (the update queued its own).
    let condition = 'attribute_exists(pk) AND tenant_id = :tenant';
    const values: Record<string, unknown> = { ':c': classification, ':tenant': tenantId };
    if (version !== undefined) {
      values[':version'] = version;
      // An item written before versions has none, and is version 1.
      condition += version === 1 ? ' AND (version = :version OR attribute_not_exists(version))' : ' AND version = :version';
    }
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tables.records,
          Key: recordKey(tenantId, id),
          UpdateExpression: 'SET classification = :c',
          ConditionExpression: condition,
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (error) {
      if (conditionFailed(error)) return false;
      throw throttled(error) ?? error;
    }
  }

  private idempotencyItem(tenantId: string, claim: IdempotencyClaim, record: StoredRecord, now: number): IdempotencyItem {
    const expiresAt = now + IDEMPOTENCY_TTL_MS;
    return {
      pk: idempotencyKey(tenantId, claim.key),
      request_hash: claim.requestHash,
      record_id: record.id,
      created_at: record.created_at,
      expires_at: expiresAt,
      ttl: Math.ceil(expiresAt / 1000),
    };
  }

  /** The live idempotency item that cancelled a write: from the cancellation when DynamoDB returned it, else read. */
  private async previousWrite(
    tenantId: string,
    claim: IdempotencyClaim,
    returned: Record<string, AttributeValue> | undefined,
  ): Promise<IdempotencyItem | null> {
    let item = returned ? (unmarshall(returned) as IdempotencyItem) : undefined;
    if (!item) {
      const { Item } = await this.db.send(
        new GetCommand({ TableName: this.tables.idempotency, Key: { pk: idempotencyKey(tenantId, claim.key) }, ConsistentRead: true }),
      );
      item = Item as IdempotencyItem | undefined;
    }
    return item && item.expires_at > this.clock() ? item : null;
  }
}

/** How a store runs large forgets. */
export interface ForgetOptions {
  /** Where large forgets go; without one (the admin CLI), every forget runs to its end within the call. */
  jobs?: ForgetJobSink | undefined;
  /** The most records a forget deletes within the call; more make a job. FORGET_SYNC_MAX unless set. */
  syncMax?: number;
}

/** Runs `work` on each item, at most `limit` at a time. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** One partition per tenant and key, so no tenant's keys gather on one partition. */
function idempotencyKey(tenantId: string, key: string): string {
  return `${tenantId}#${key}`;
}
