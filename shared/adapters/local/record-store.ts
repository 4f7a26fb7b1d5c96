import { AppError } from '../../domain/errors.js';
import { IDEMPOTENCY_TTL_MS } from '../../domain/idempotency.js';
import type { ListRequest } from '../../domain/listing.js';
import { idMillis, receiptOf, type Classification, type StoredRecord } from '../../domain/record.js';
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
} from '../../ports.js';
import type { Db } from './database.js';
import { groupCommitOf } from './group-commit.js';
import { indexChanges } from './index-changes.js';
import { filterConditions, NEXT_SEQ_SQL, toStoredRecord, type RecordRow } from './rows.js';
import type { Statement } from 'better-sqlite3';
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
  private readonly forgetSliceTx;
  private readonly importTx;
  private readonly eraseSliceTx;
  private readonly eraseIndexSliceTx;
  private readonly eraseRestTx;
  private readonly statements = new Map<string, Statement>();
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
          // The first answer again, even when its record was deleted since (as on DynamoDB): a retry must
          // not bring a deleted record back. A UUIDv7 carries its creation millisecond.
          const receipt = receiptById.get(tenantId, previous.record_id) ?? {
            id: previous.record_id,
            created_at: new Date(idMillis(previous.record_id)).toISOString(),
            tenant_id: tenantId,
          };
          return { receipt: receiptOf(receipt), replayed: true };
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
    const remove = (tenantId: string, id: string): boolean => {
      const row = findForDelete.get(tenantId, id);
      if (!row) return false;
      changeIndex(tenantId, [{ doc: row.seq, title: row.title, body: row.body }], -1);
      deleteRecord.run(row.seq);
      deleteJob.run(tenantId, id);
      return true;
    };
    this.deleteTx = db.transaction((tenantId: string, id: string): DeletedRecord | null =>
      remove(tenantId, id) ? { id, deleted_at: new Date(this.clock()).toISOString() } : null,
    );
    // A forget's records go a slice at a time, each slice one transaction, so that the writes and deletes of
    // other tenants wait for one slice at most, never for the whole forget. A slice leaves the index in one
    // change (each term's postings rewritten once for all its records, not once per record); its size adapts
    // so that a slice takes about FORGET_SLICE_MS.
    this.forgetSliceTx = db.transaction((tenantId: string, ids: string[]): number => {
      const rows = ids.map((id) => findForDelete.get(tenantId, id)).filter((row) => row !== undefined);
      rows.sort((a, b) => a.seq - b.seq);
      changeIndex(tenantId, rows.map((row) => ({ doc: row.seq, title: row.title, body: row.body })), -1);
      for (const row of rows) deleteRecord.run(row.seq);
      for (const id of ids) deleteJob.run(tenantId, id);
      return rows.length;
    });

    // An import keeps the record's id, creation time and classification, and counts against no quota. SQLite
    // keeps ids unique across tenants, so an id another tenant holds is not imported (`taken`).
    const importRecord = db.prepare(`
      INSERT INTO records (seq, id, tenant_id, agent_id, type, title, body, client, metadata, created_at, classification)
      VALUES (${NEXT_SEQ_SQL}, @id, @tenant_id, @agent_id, @type, @title, @body, @client, @metadata, @created_at, @classification)
      ON CONFLICT (id) DO NOTHING`);
    const ownerOf = db.prepare<[string], string>('SELECT tenant_id FROM records WHERE id = ?').pluck();
    this.importTx = db.transaction((tenantId: string, records: StoredRecord[]): ImportResult => {
      const result = { imported: 0, skipped: 0, taken: 0 };
      const now = this.clock();
      for (const record of records) {
        const inserted = importRecord.run({
          ...record,
          tenant_id: tenantId,
          metadata: record.metadata === null ? null : JSON.stringify(record.metadata),
          classification: record.classification === null ? null : JSON.stringify(record.classification),
        }).changes;
        if (inserted === 1) {
          result.imported++;
          if (record.classification === null) insertJob.run(tenantId, record.id, now);
        } else if (ownerOf.get(record.id) === tenantId) result.skipped++;
        else result.taken++;
      }
      return result;
    });

    // A tenant's erase goes a slice at a time too, so that the server's writes (another process, when the
    // admin CLI erases) wait for one slice at most. The records first, then, once none is left for a merge
    // to take in, the tenant's index and everything else that names it.
    const eraseRecords = db.prepare<[string, number]>(
      'DELETE FROM records WHERE seq IN (SELECT seq FROM records INDEXED BY records_tenant_created WHERE tenant_id = ? LIMIT ?)',
    );
    const bumpTail = db.prepare('UPDATE search_state SET tail_gen = tail_gen + 1');
    this.eraseSliceTx = db.transaction((tenantId: string): number => {
      const gone = eraseRecords.run(tenantId, ERASE_SLICE_ROWS).changes;
      // The searches' tail caches and a merge under way read the records above the mark again (search-merge.ts).
      if (gone > 0) bumpTail.run();
      return gone;
    });
    const tenantKey = db.prepare<[string], number>('SELECT key FROM search_tenants WHERE tenant = ?').pluck();
    const indexSlices = ['search_heads', 'search_metas', 'search_blocks', 'search_positions'].map((table) =>
      db.prepare<[number, number]>(`DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE tkey = ? LIMIT ?)`),
    );
    this.eraseIndexSliceTx = db.transaction((tenantId: string): number => {
      const key = tenantKey.get(tenantId);
      if (key === undefined) return 0;
      let left = ERASE_SLICE_ROWS;
      for (const slice of indexSlices) left -= slice.run(key, left).changes;
      if (left > 0) {
        // The row stays, emptied: a tenant's key never changes, and connections keep it (posting-storage.ts).
        db.prepare('UPDATE search_tenants SET docs = 0, title_words = 0, body_words = 0 WHERE key = ?').run(key);
        db.prepare('DELETE FROM search_newest WHERE tenant_id = ?').run(tenantId);
      }
      return ERASE_SLICE_ROWS - left;
    });
    this.eraseRestTx = db.transaction((tenantId: string) => ({
      classification_jobs: db.prepare('DELETE FROM classification_jobs WHERE tenant_id = ?').run(tenantId).changes,
      idempotency_keys: db.prepare('DELETE FROM idempotency_keys WHERE tenant_id = ?').run(tenantId).changes,
    }));

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

  async list(tenantId: string, request: ListRequest): Promise<StoredRecord[]> {
    const { where, values } = filterConditions(request.filters);
    const dir = request.order === 'asc' ? 'ASC' : 'DESC';
    if (request.after) {
      // A row value: SQLite reads it as one range of the index, from the cursor's position on.
      where.push(`(created_at, id) ${request.order === 'asc' ? '>' : '<'} (?, ?)`);
      values.push(request.after.created_at, request.after.id);
    }
    const rows = this.statement(
      `SELECT * FROM records WHERE tenant_id = ?${where.map((c) => ` AND ${c}`).join('')} ORDER BY created_at ${dir}, id ${dir} LIMIT ?`,
    ).all(tenantId, ...values, request.limit) as RecordRow[];
    return rows.map(toStoredRecord);
  }

  async forget(tenantId: string, selectors: ForgetSelectors, { dryRun, at }: { dryRun: boolean; at: Date }): Promise<ForgetOutcome> {
    const { where, values } = filterConditions({ agent_id: selectors.agent_id, type: selectors.type, client: selectors.client });
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
      const matched = this.statement(`SELECT count(*) ${sql}`).pluck().get(tenantId, ...values) as number;
      return { kind: 'done', matched, deleted: 0 };
    }
    const ids = this.statement(`SELECT id ${sql}`).pluck().all(tenantId, ...values) as string[];
    let deleted = 0;
    let size = 64;
    for (let next = 0; next < ids.length; ) {
      const slice = ids.slice(next, next + size);
      const started = performance.now();
      deleted += await this.commits.submit(() => this.forgetSliceTx(tenantId, slice));
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
    const result = await this.commits.submit(() => this.importTx(tenantId, records));
    if (result.imported > 0) this.merger?.wake();
    return result;
  }

  async eraseTenant(tenantId: string, progress?: (line: string) => void): Promise<ErasedCounts> {
    let records = 0;
    for (let gone = -1; gone !== 0; ) {
      gone = await this.commits.submit(() => this.eraseSliceTx(tenantId));
      records += gone;
      if (gone > 0) progress?.(`records: ${records} deleted`);
    }
    let indexRows = 0;
    for (let gone = -1; gone !== 0; ) {
      gone = await this.commits.submit(() => this.eraseIndexSliceTx(tenantId));
      indexRows += gone;
    }
    const rest = await this.commits.submit(() => this.eraseRestTx(tenantId));
    return { records, search_index_rows: indexRows, ...rest };
  }

  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) this.statements.set(sql, (statement = this.db.prepare(sql)));
    return statement;
  }

  async setClassification(tenantId: string, id: string, classification: Classification): Promise<boolean> {
    // Through the group commit too: the worker's suggestions then share the writes' fsyncs.
    return this.commits.submit(() => this.classifyStmt.run(JSON.stringify(classification), tenantId, id).changes === 1);
  }
}

/** Work per transaction of a forget, about: other writers wait about this long for it at most. */
const FORGET_SLICE_MS = 100;

/** Rows per transaction of a tenant's erase. */
const ERASE_SLICE_ROWS = 2000;
