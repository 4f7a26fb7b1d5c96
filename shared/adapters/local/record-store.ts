import { AppError } from '../../domain/errors.js';
import { IDEMPOTENCY_TTL_MS } from '../../domain/idempotency.js';
import { receiptOf, type Classification, type StoredRecord } from '../../domain/record.js';
import type { CreateRecordOptions, CreateRecordResult, DeletedRecord, RecordStore } from '../../ports.js';
import type { Db } from './database.js';
import { groupCommitOf } from './group-commit.js';
import { indexChanges } from './index-changes.js';
import { NEXT_SEQ_SQL, toStoredRecord, type RecordRow } from './rows.js';
import type { SearchMerger } from './search-merger.js';

/**
 * Records on SQLite. One transaction (a savepoint within a group commit) holds the idempotency check, the
 * quota count, the record and its classification job, so either all of them are durable or none is; writes
 * that arrive together share one commit and one fsync (group-commit.ts). A record is searchable as soon as
 * it is stored: searches read the records above the merge mark as the index's tail, and the merger takes
 * them into the index later, in large batches (search-merge.ts).
 */
export class SqliteRecordStore implements RecordStore {
  private readonly createTx;
  private readonly deleteTx;
  private readonly getStmt;
  private readonly classifyStmt;
  private readonly commits;

  constructor(
    private readonly db: Db,
    private readonly clock: () => number = Date.now,
    private readonly merger?: Pick<SearchMerger, 'wake'>,
  ) {
    const findKey = db.prepare<[string, string, number], { request_hash: string; record_id: string }>(
      'SELECT request_hash, record_id FROM idempotency_keys WHERE tenant_id = ? AND key = ? AND expires_at > ?',
    );
    const receiptById = db.prepare<[string, string], Pick<StoredRecord, 'id' | 'created_at' | 'tenant_id'>>(
      'SELECT id, created_at, tenant_id FROM records WHERE tenant_id = ? AND id = ?',
    );
    // The quota check and the count are one statement: the row only changes while it is under the quota.
    const countRecord = db.prepare<{ tenant: string; month: string; quota: number }>(`
      INSERT INTO usage (tenant_id, month, records) SELECT @tenant, @month, 1 WHERE @quota > 0
      ON CONFLICT (tenant_id, month) DO UPDATE SET records = records + 1 WHERE records < @quota`);
    const insertRecord = db.prepare(`
      INSERT INTO records (seq, id, tenant_id, agent_id, type, title, body, client, metadata, created_at)
      VALUES (${NEXT_SEQ_SQL}, @id, @tenant_id, @agent_id, @type, @title, @body, @client, @metadata, @created_at)`);
    const insertJob = db.prepare('INSERT INTO classification_jobs (tenant_id, record_id, available_at) VALUES (?, ?, ?)');
    const putKey = db.prepare(`
      INSERT INTO idempotency_keys (tenant_id, key, request_hash, record_id, expires_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (tenant_id, key) DO UPDATE SET
        request_hash = excluded.request_hash, record_id = excluded.record_id, expires_at = excluded.expires_at`);

    this.createTx = db.transaction((tenantId: string, record: StoredRecord, options: CreateRecordOptions): CreateRecordResult => {
      const now = this.clock();
      const claim = options.idempotency;
      if (claim) {
        const previous = findKey.get(tenantId, claim.key, now);
        if (previous) {
          if (previous.request_hash !== claim.requestHash) {
            throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used for a different request');
          }
          const receipt = receiptById.get(tenantId, previous.record_id);
          if (receipt) return { receipt: receiptOf(receipt), replayed: true };
        }
      }
      if (countRecord.run({ tenant: tenantId, month: options.month, quota: options.recordQuota }).changes === 0) {
        throw new AppError('record_quota_exceeded', 'The monthly record quota is used up');
      }
      insertRecord.run({
        ...record,
        tenant_id: tenantId,
        metadata: record.metadata === null ? null : JSON.stringify(record.metadata),
      });
      insertJob.run(tenantId, record.id, now);
      if (claim) putKey.run(tenantId, claim.key, claim.requestHash, record.id, now + IDEMPOTENCY_TTL_MS);
      return { receipt: receiptOf({ ...record, tenant_id: tenantId }), replayed: false };
    });

    // A delete takes the record out of the search index with the text the index was given, then removes the
    // record and its classification job, all in one transaction (index-changes.ts).
    const changeIndex = indexChanges(db);
    const findForDelete = db.prepare<[string, string], { seq: number; title: string; body: string }>(
      'SELECT seq, title, body FROM records WHERE tenant_id = ? AND id = ?',
    );
    const deleteRecord = db.prepare<[number]>('DELETE FROM records WHERE seq = ?');
    const deleteJob = db.prepare<[string, string]>('DELETE FROM classification_jobs WHERE tenant_id = ? AND record_id = ?');
    this.deleteTx = db.transaction((tenantId: string, id: string): DeletedRecord | null => {
      const row = findForDelete.get(tenantId, id);
      if (!row) return null;
      changeIndex(tenantId, { doc: row.seq, title: row.title, body: row.body }, -1);
      deleteRecord.run(row.seq);
      deleteJob.run(tenantId, id);
      return { id, deleted_at: new Date(this.clock()).toISOString() };
    });

    this.commits = groupCommitOf(db);
    this.getStmt = db.prepare<[string, string], RecordRow>('SELECT * FROM records WHERE tenant_id = ? AND id = ?');
    this.classifyStmt = db.prepare<[string, string, string]>(
      'UPDATE records SET classification = ? WHERE tenant_id = ? AND id = ?',
    );
  }

  /** Deletes idempotency keys older than 24 h (DynamoDB expires them with TTL; SQLite needs a sweep). */
  purgeExpiredIdempotencyKeys(): number {
    return this.db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?').run(this.clock()).changes;
  }

  async create(tenantId: string, record: StoredRecord, options: CreateRecordOptions): Promise<CreateRecordResult> {
    const result = await this.commits.submit(() => this.createTx(tenantId, record, options));
    if (!result.replayed) this.merger?.wake();
    return result;
  }

  async get(tenantId: string, id: string): Promise<StoredRecord | null> {
    const row = this.getStmt.get(tenantId, id);
    return row ? toStoredRecord(row) : null;
  }

  async delete(tenantId: string, id: string): Promise<DeletedRecord | null> {
    // Through the group commit: answered once durable, like a write.
    return this.commits.submit(() => this.deleteTx(tenantId, id));
  }

  async setClassification(tenantId: string, id: string, classification: Classification): Promise<boolean> {
    // Through the group commit too: the worker's suggestions then share the writes' fsyncs.
    return this.commits.submit(() => this.classifyStmt.run(JSON.stringify(classification), tenantId, id).changes === 1);
  }
}
