import type { Statement } from 'better-sqlite3';
import type { StoredRecord } from '../../domain/record.js';
import { preparedBySql, type Db } from './db.js';
import { NEWEST_UPSERT_SQL } from './newest.js';
import * as SQL from './record-sql.js';
import { RowReader, type RecordParams, type RecordRow } from './rows.js';

type Seq = { seq: number };

/** The statements of record-sql.ts, prepared on one connection, with their parameters and rows typed. */
function prepare(db: Db) {
  return {
    insertRecord: db.prepare<RecordParams>(SQL.INSERT_RECORD),
    importRecord: db.prepare<RecordParams>(SQL.IMPORT_RECORD),
    updateRecord: db.prepare<RecordParams & Seq>(SQL.UPDATE_RECORD),
    moveRecord: db.prepare<RecordParams & Seq>(SQL.MOVE_RECORD),
    supersedeRecord: db.prepare<{ by: string; tenant: string; id: string; agent: string | null }>(SQL.SUPERSEDE_RECORD),
    selectRecord: db.prepare<[tenantId: string, id: string], RecordRow>(SQL.SELECT_RECORD),
    selectReceipt: db.prepare<[tenantId: string, id: string], Pick<StoredRecord, 'id' | 'created_at' | 'tenant_id'>>(SQL.SELECT_RECEIPT),
    selectIndexedText: db.prepare<[tenantId: string, id: string], Seq & Pick<StoredRecord, 'title' | 'body'>>(SQL.SELECT_INDEXED_TEXT),
    deleteRecord: db.prepare<[seq: number]>(SQL.DELETE_RECORD),
    setClassification: db.prepare<[classification: string, tenantId: string, id: string, version: number | null]>(SQL.SET_CLASSIFICATION),
    eraseRecords: db.prepare<[tenantId: string, rows: number]>(SQL.ERASE_RECORDS),
    countRecord: db.prepare<{ tenant: string; month: string; quota: number }>(SQL.COUNT_RECORD),
    insertJob: db.prepare<[tenantId: string, recordId: string, availableAt: number]>(SQL.INSERT_JOB),
    deleteRecordJob: db.prepare<[tenantId: string, recordId: string]>(SQL.DELETE_RECORD_JOB),
    eraseJobs: db.prepare<[tenantId: string]>(SQL.ERASE_JOBS),
    findIdempotencyKey: db.prepare<[tenantId: string, key: string, now: number], { request_hash: string; record_id: string }>(SQL.FIND_IDEMPOTENCY_KEY),
    putIdempotencyKey: db.prepare<[tenantId: string, key: string, requestHash: string, recordId: string, expiresAt: number]>(SQL.PUT_IDEMPOTENCY_KEY),
    purgeIdempotencyKeys: db.prepare<[now: number]>(SQL.PURGE_IDEMPOTENCY_KEYS),
    eraseIdempotencyKeys: db.prepare<[tenantId: string]>(SQL.ERASE_IDEMPOTENCY_KEYS),
    bumpTail: db.prepare(SQL.BUMP_TAIL),
    tenantKey: db.prepare<[tenantId: string], number>(SQL.TENANT_KEY).pluck(),
    eraseIndexRows: SQL.INDEX_TABLES.map((table) => db.prepare<[tenantKey: number, rows: number]>(SQL.eraseIndexRows(table))),
    resetTenantStats: db.prepare<[tenantKey: number]>(SQL.RESET_TENANT_STATS),
    eraseNewest: db.prepare<[tenantId: string]>(SQL.ERASE_NEWEST),
    /** Raises a block's newest time (newest.ts): (tenant, block, created_at). */
    raiseNewest: db.prepare<[tenantId: string, block: number, createdAt: string]>(NEWEST_UPSERT_SQL),
    /** A statement whose text varies with the request (a forget's selectors), prepared on its first use. */
    varying: preparedBySql((sql): Statement => db.prepare(sql)),
    /** The same for a statement that reads whole records (a listing's, by its filters), through a RowReader. */
    rows: preparedBySql((sql) => new RowReader<RecordRow>(db.prepare(sql))),
  };
}

/** The named statements of the records and what a record's write or delete touches with them, on one connection. */
export type RecordStatements = ReturnType<typeof prepare>;

const prepared = new WeakMap<Db, RecordStatements>();

/** The record statements of `db`, prepared once per connection whoever asks (the record store, the document index). */
export function recordStatements(db: Db): RecordStatements {
  let statements = prepared.get(db);
  if (!statements) prepared.set(db, (statements = prepare(db)));
  return statements;
}
