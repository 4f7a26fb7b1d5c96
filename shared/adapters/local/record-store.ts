import type { Statement } from 'better-sqlite3';
import { AppError } from '../../domain/errors.js';
import { IDEMPOTENCY_TTL_MS } from '../../domain/idempotency.js';
import type { ListRequest } from '../../domain/listing.js';
import { changesText, idMillis, patchedRecord, receiptOf, type Classification, type StoredRecord } from '../../domain/record.js';
import type { RecordPatch } from '../../domain/schemas.js';
import type {
  CreateRecordOptions,
  CreateRecordResult,
  DeletedRecord,
  ErasedCounts,
  ForgetJobStatus,
  ForgetOutcome,
  ForgetSelectors,
  ImportResult,
  RecordStore,
  UpdateRecordOptions,
} from '../../ports.js';
import type { Db } from './db.js';
import { groupCommitOf, type GroupCommit } from './group-commit.js';
import { indexChanges } from './index-changes.js';
import { recordStatements, type RecordStatements } from './record-statements.js';
import { filterConditions, recordParams, toStoredRecord } from './rows.js';
import type { SearchMerger } from './search-merger.js';

/**
 * Records on SQLite. One transaction (a savepoint within a group commit) holds the idempotency check, the
 * quota count, the records it supersedes, the record and its classification job, so either all of them are
 * durable or none is; writes that arrive together share one commit and one fsync (group-commit.ts). A record
 * is searchable as soon as it is stored: searches read the records above the merge mark as the index's
 * tail, and the merger takes them into the index later, in large batches (search-merge.ts). An update that
 * changes the text takes the old one out of the index and gives the record a new seq, in its transaction, so
 * the new text is tail like a new record's (invariant 7 there).
 */
export class SqliteRecordStore implements RecordStore {
  private readonly sql: RecordStatements;
  private readonly commits: GroupCommit;
  private readonly changeIndex: ReturnType<typeof indexChanges>;
  /** The methods below that run as one transaction each (a savepoint, inside a group commit). */
  private readonly tx;
  /** What ping runs: a read of the schema, no table scan. */
  private readonly schemaRead: Statement;

  constructor(
    db: Db,
    private readonly clock: () => number = Date.now,
    private readonly merger?: Pick<SearchMerger, 'wake'>,
  ) {
    this.sql = recordStatements(db);
    this.commits = groupCommitOf(db);
    this.changeIndex = indexChanges(db);
    this.schemaRead = db.prepare('SELECT count(*) FROM sqlite_schema');
    this.tx = {
      create: db.transaction(this.createRecord.bind(this)),
      update: db.transaction(this.updateRecord.bind(this)),
      delete: db.transaction(this.deleteRecord.bind(this)),
      forgetSlice: db.transaction(this.forgetSlice.bind(this)),
      import: db.transaction(this.importRecords.bind(this)),
      eraseRecords: db.transaction(this.eraseRecordsSlice.bind(this)),
      eraseIndex: db.transaction(this.eraseIndexSlice.bind(this)),
      eraseRest: db.transaction(this.eraseRest.bind(this)),
    };
  }

  /** Deletes idempotency keys older than 24 h (DynamoDB expires them with TTL; SQLite needs a sweep). */
  purgeExpiredIdempotencyKeys(): number {
    return this.sql.purgeIdempotencyKeys.run(this.clock()).changes;
  }

  async create(tenantId: string, record: StoredRecord, options: CreateRecordOptions): Promise<CreateRecordResult> {
    const result = await this.commits.submit(() => this.tx.create(tenantId, record, options));
    if (!result.replayed) this.merger?.wake();
    return result;
  }

  async ping(): Promise<void> {
    // Throws when the connection is closed, or the file cannot be read.
    this.schemaRead.get();
  }

  async get(tenantId: string, id: string): Promise<StoredRecord | null> {
    const row = this.sql.selectRecord.get(tenantId, id);
    return row ? toStoredRecord(row) : null;
  }

  async update(tenantId: string, id: string, patch: RecordPatch, options: UpdateRecordOptions): Promise<StoredRecord | null> {
    const updated = await this.commits.submit(() => this.tx.update(tenantId, id, patch, options));
    if (updated?.moved) this.merger?.wake();
    return updated?.record ?? null;
  }

  async delete(tenantId: string, id: string): Promise<DeletedRecord | null> {
    // Through the group commit: answered once durable, like a write.
    return this.commits.submit(() => this.tx.delete(tenantId, id));
  }

  async list(tenantId: string, request: ListRequest): Promise<StoredRecord[]> {
    const { where, values } = filterConditions(request.filters);
    const dir = request.order === 'asc' ? 'ASC' : 'DESC';
    if (request.after) {
      // A row value: SQLite reads it as one range of the index, from the cursor's position on.
      where.push(`(created_at, id) ${request.order === 'asc' ? '>' : '<'} (?, ?)`);
      values.push(request.after.created_at, request.after.id);
    }
    const rows = this.sql
      .rows(`SELECT * FROM records WHERE tenant_id = ?${where.map((c) => ` AND ${c}`).join('')} ORDER BY created_at ${dir}, id ${dir} LIMIT ?`)
      .all(tenantId, ...values, request.limit);
    return rows.map(toStoredRecord);
  }

  async forget(tenantId: string, selectors: ForgetSelectors, { dryRun, at }: { dryRun: boolean; at: Date }): Promise<ForgetOutcome> {
    const { where, values } = filterConditions({ agent_id: selectors.agent_id, type: selectors.type, client: selectors.client, include_superseded: true });
    // Without ids, created before the forget began: a record written while it runs is never taken. Named ids
    // are taken whatever their created_at, which an import may set after today.
    let until = selectors.before;
    if (selectors.ids === undefined && (until === undefined || at.toISOString() < until)) until = at.toISOString();
    if (until !== undefined) {
      where.push('created_at < ?');
      values.push(until);
    }
    if (selectors.ids !== undefined) {
      where.push('id IN (SELECT value FROM json_each(?))');
      values.push(JSON.stringify(selectors.ids));
    }
    const sql = `FROM records WHERE tenant_id = ?${where.map((c) => ` AND ${c}`).join('')}`;
    if (dryRun) {
      const matched = this.sql.varying(`SELECT count(*) ${sql}`).pluck().get(tenantId, ...values) as number;
      return { kind: 'done', matched, deleted: 0 };
    }
    const ids = this.sql.varying(`SELECT id ${sql}`).pluck().all(tenantId, ...values) as string[];
    let deleted = 0;
    let size = 64;
    for (let next = 0; next < ids.length; ) {
      const slice = ids.slice(next, next + size);
      const started = performance.now();
      deleted += await this.commits.submit(() => this.tx.forgetSlice(tenantId, slice));
      next += slice.length;
      // The next slice sized to take about FORGET_SLICE_MS, as this one went.
      const ms = performance.now() - started;
      size = Math.max(16, Math.min(4096, Math.round(size * Math.min(2, FORGET_SLICE_MS / Math.max(ms, 1)))));
    }
    return { kind: 'done', matched: ids.length, deleted };
  }

  /** SQLite forgets within the request, so it never has a job: every job id is unknown. */
  async forgetJob(_tenantId: string, _jobId: string): Promise<ForgetJobStatus | null> {
    return null;
  }

  async import(tenantId: string, records: StoredRecord[]): Promise<ImportResult> {
    const result = await this.commits.submit(() => this.tx.import(tenantId, records));
    if (result.imported > 0) this.merger?.wake();
    return result;
  }

  async eraseTenant(tenantId: string, progress?: (line: string) => void): Promise<ErasedCounts> {
    let records = 0;
    for (let gone = -1; gone !== 0; ) {
      gone = await this.commits.submit(() => this.tx.eraseRecords(tenantId));
      records += gone;
      if (gone > 0) progress?.(`records: ${records} deleted`);
    }
    let indexRows = 0;
    for (let gone = -1; gone !== 0; ) {
      gone = await this.commits.submit(() => this.tx.eraseIndex(tenantId));
      indexRows += gone;
    }
    const rest = await this.commits.submit(() => this.tx.eraseRest(tenantId));
    return { records, search_index_rows: indexRows, ...rest };
  }

  /**
   * As the port says; with `version`, only while the record still has that version, so that a suggestion for
   * a text an update has since replaced never lands on the new one (the update queued a job for it).
   */
  async setClassification(tenantId: string, id: string, classification: Classification, version?: number): Promise<boolean> {
    // Through the group commit too: the worker's suggestions then share the writes' fsyncs.
    return this.commits.submit(() => this.sql.setClassification.run(JSON.stringify(classification), tenantId, id, version ?? null).changes === 1);
  }

  // The transactions' work (this.tx runs each as one).

  private createRecord(tenantId: string, record: StoredRecord, options: CreateRecordOptions): CreateRecordResult {
    const now = this.clock();
    const claim = options.idempotency;
    if (claim) {
      const previous = this.sql.findIdempotencyKey.get(tenantId, claim.key, now);
      if (previous) {
        if (previous.request_hash !== claim.requestHash) {
          throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used for a different request');
        }
        // The first answer again, even when its record was deleted since (as on DynamoDB): a retry must
        // not bring a deleted record back. A UUIDv7 carries its creation millisecond.
        const receipt = this.sql.selectReceipt.get(tenantId, previous.record_id) ?? {
          id: previous.record_id,
          created_at: new Date(idMillis(previous.record_id)).toISOString(),
          tenant_id: tenantId,
        };
        return { receipt: receiptOf(receipt), replayed: true };
      }
    }
    // Each named record must be one GET would return (and the agent's, for an agent's key); else nothing is stored.
    for (const supersededId of options.supersedes?.ids ?? []) {
      const marked = this.sql.supersedeRecord.run({ by: record.id, tenant: tenantId, id: supersededId, agent: options.supersedes!.agentId });
      if (marked.changes !== 1) throw new AppError('not_found', `No record with id ${supersededId}`);
    }
    if (this.sql.countRecord.run({ tenant: tenantId, month: options.month, quota: options.recordQuota }).changes === 0) {
      throw new AppError('record_quota_exceeded', 'The monthly record quota is used up');
    }
    this.sql.insertRecord.run(recordParams({ ...record, tenant_id: tenantId }));
    this.sql.insertJob.run(tenantId, record.id, now);
    if (claim) this.sql.putIdempotencyKey.run(tenantId, claim.key, claim.requestHash, record.id, now + IDEMPOTENCY_TTL_MS);
    return { receipt: receiptOf({ ...record, tenant_id: tenantId }), replayed: false };
  }

  /**
   * The patched record, when the tenant has it and `ifVersions` holds its version. A new text leaves the index
   * as a delete does (the text the index was given goes out: index-changes.ts), and the record moves to a new
   * seq, where it is tail like a new record, with one classification job for the new text; other fields
   * change in place, and the index with them (a search reads them from the row). `moved`: the text changed.
   */
  private updateRecord(tenantId: string, id: string, patch: RecordPatch, { ifVersions, at }: UpdateRecordOptions): { record: StoredRecord; moved: boolean } | null {
    const row = this.sql.selectRecord.get(tenantId, id);
    if (!row) return null;
    const current = toStoredRecord(row);
    if (ifVersions !== undefined && !ifVersions.includes(current.version)) {
      throw new AppError('version_conflict', `The record is at version ${current.version} (ETag "${current.version}"); nothing changed`);
    }
    const record = patchedRecord(current, patch, at);
    const params = { ...recordParams(record), seq: row.seq };
    if (!changesText(current, patch)) {
      this.sql.updateRecord.run(params);
      return { record, moved: false };
    }
    this.changeIndex(tenantId, [{ doc: row.seq, title: row.title, body: row.body }], -1);
    this.sql.moveRecord.run(params);
    // A job still waiting would classify the new text too; one is enough.
    this.sql.deleteRecordJob.run(tenantId, id);
    this.sql.insertJob.run(tenantId, id, this.clock());
    return { record, moved: true };
  }

  /**
   * Takes the record out of the search index with the text the index was given, then removes the record and
   * its classification job (index-changes.ts).
   */
  private deleteRecord(tenantId: string, id: string): DeletedRecord | null {
    const row = this.sql.selectIndexedText.get(tenantId, id);
    if (!row) return null;
    this.changeIndex(tenantId, [{ doc: row.seq, title: row.title, body: row.body }], -1);
    this.sql.deleteRecord.run(row.seq);
    this.sql.deleteRecordJob.run(tenantId, id);
    return { id, deleted_at: new Date(this.clock()).toISOString() };
  }

  /**
   * One slice of a forget's records. A forget goes a slice at a time, each slice one transaction, so that the
   * writes and deletes of other tenants wait for one slice at most, never for the whole forget. A slice leaves
   * the index in one change (each term's postings rewritten once for all its records, not once per record);
   * its size adapts so that a slice takes about FORGET_SLICE_MS.
   */
  private forgetSlice(tenantId: string, ids: string[]): number {
    const rows = ids.map((id) => this.sql.selectIndexedText.get(tenantId, id)).filter((row) => row !== undefined);
    rows.sort((a, b) => a.seq - b.seq);
    this.changeIndex(tenantId, rows.map((row) => ({ doc: row.seq, title: row.title, body: row.body })), -1);
    for (const row of rows) this.sql.deleteRecord.run(row.seq);
    for (const id of ids) this.sql.deleteRecordJob.run(tenantId, id);
    return rows.length;
  }

  /**
   * An import keeps the record's id, creation time and classification, and counts against no quota. Ids are
   * unique per tenant, so a record whose id the tenant holds is skipped, whatever other tenants hold.
   */
  private importRecords(tenantId: string, records: StoredRecord[]): ImportResult {
    const result = { imported: 0, skipped: 0 };
    const now = this.clock();
    for (const record of records) {
      const inserted = this.sql.importRecord.run(recordParams({ ...record, tenant_id: tenantId })).changes;
      if (inserted === 0) {
        result.skipped++;
        continue;
      }
      result.imported++;
      if (record.classification === null) this.sql.insertJob.run(tenantId, record.id, now);
    }
    return result;
  }

  /**
   * One slice of a tenant's records. A tenant's erase goes a slice at a time, so that the server's writes
   * (another process, when the admin CLI erases) wait for one slice at most: the records first, then, once
   * none is left for a merge to take in, the tenant's index and everything else that names it.
   */
  private eraseRecordsSlice(tenantId: string): number {
    const gone = this.sql.eraseRecords.run(tenantId, ERASE_SLICE_ROWS).changes;
    if (gone > 0) this.sql.bumpTail.run();
    return gone;
  }

  /** One slice of the tenant's index rows; once they are gone, its statistics and newest times. */
  private eraseIndexSlice(tenantId: string): number {
    const key = this.sql.tenantKey.get(tenantId);
    if (key === undefined) return 0;
    let left = ERASE_SLICE_ROWS;
    for (const slice of this.sql.eraseIndexRows) left -= slice.run(key, left).changes;
    if (left > 0) {
      this.sql.resetTenantStats.run(key);
      this.sql.eraseNewest.run(tenantId);
    }
    return ERASE_SLICE_ROWS - left;
  }

  private eraseRest(tenantId: string): ErasedCounts {
    return {
      classification_jobs: this.sql.eraseJobs.run(tenantId).changes,
      idempotency_keys: this.sql.eraseIdempotencyKeys.run(tenantId).changes,
    };
  }
}

/** Work per transaction of a forget, about: other writers wait about this long for it at most. */
const FORGET_SLICE_MS = 100;

/** Rows per transaction of a tenant's erase. */
const ERASE_SLICE_ROWS = 2000;
