import { NEXT_SEQ_SQL, RECORD_COLUMNS } from './rows.js';

/**
 * The SQL of the SQLite record store and of the stream's document index, each statement by name;
 * record-statements.ts prepares them once per connection. The statements that write a whole row take their
 * columns from RECORD_COLUMNS, and so from the record's schema: a field of the record is written by each of
 * them, or by none.
 */

const columns = RECORD_COLUMNS.join(', ');
const values = RECORD_COLUMNS.map((column) => `@${column}`).join(', ');
/** A record's id and tenant never change: a new version of it rewrites the other columns. */
const changeable = RECORD_COLUMNS.filter((column) => column !== 'id' && column !== 'tenant_id');

// Records.

/** A record (recordParams), under a seq above every seq given before. */
export const INSERT_RECORD = `INSERT INTO records (seq, ${columns}) VALUES (${NEXT_SEQ_SQL}, ${values})`;

/** As INSERT_RECORD, but an id the tenant holds already inserts nothing (ids are each tenant's own): an import. */
export const IMPORT_RECORD = `${INSERT_RECORD} ON CONFLICT (tenant_id, id) DO NOTHING`;

/** A new version of the record at `@seq`, from the stream or an update that keeps its text: every column but its id and tenant. */
export const UPDATE_RECORD = `UPDATE records SET ${changeable.map((column) => `${column} = @${column}`).join(', ')} WHERE seq = @seq`;

/**
 * A new version of the record at `@seq` with a new text, from an update: every column but its id and tenant,
 * under a new seq above every seq given before (the triggers of rows.ts check it and move the counter), so
 * that its new text is the index's tail, as a new record's is (search-merge.ts, invariant 7).
 */
export const MOVE_RECORD = `UPDATE records SET seq = ${NEXT_SEQ_SQL}, ${changeable.map((column) => `${column} = @${column}`).join(', ')} WHERE seq = @seq`;

/** Marks a tenant's record as superseded by another, when `@agent` is null or wrote it: (@by, @tenant, @id, @agent). */
export const SUPERSEDE_RECORD = 'UPDATE records SET superseded_by = @by WHERE tenant_id = @tenant AND id = @id AND (@agent IS NULL OR agent_id = @agent)';

/** The row of a tenant's record: (tenant, id). */
export const SELECT_RECORD = 'SELECT * FROM records WHERE tenant_id = ? AND id = ?';

/** The receipt of a tenant's record: (tenant, id). */
export const SELECT_RECEIPT = 'SELECT id, created_at, tenant_id FROM records WHERE tenant_id = ? AND id = ?';

/** A tenant's record's seq and the text the index was given: (tenant, id). */
export const SELECT_INDEXED_TEXT = 'SELECT seq, title, body FROM records WHERE tenant_id = ? AND id = ?';

/** Deletes a record's row: (seq). */
export const DELETE_RECORD = 'DELETE FROM records WHERE seq = ?';

/** Sets a tenant's record's classification while it has the version, when one is given: (classification as JSON, tenant, id, version or null). */
export const SET_CLASSIFICATION = 'UPDATE records SET classification = ? WHERE tenant_id = ? AND id = ? AND version = coalesce(?, version)';

/** Deletes up to `?2` of a tenant's records: (tenant, rows). */
export const ERASE_RECORDS = 'DELETE FROM records WHERE seq IN (SELECT seq FROM records INDEXED BY records_tenant_created WHERE tenant_id = ? LIMIT ?)';

// The month's record count: the quota check and the count are one statement, so the row only changes while
// it is under the quota.

/** Counts a record in the tenant's month: (@tenant, @month, @quota); changes nothing when the quota is used up. */
export const COUNT_RECORD = `
  INSERT INTO usage (tenant_id, month, records) SELECT @tenant, @month, 1 WHERE @quota > 0
  ON CONFLICT (tenant_id, month) DO UPDATE SET records = records + 1 WHERE records < @quota`;

// Classification jobs.

/** Queues a record's classification: (tenant, record id, available at). */
export const INSERT_JOB = 'INSERT INTO classification_jobs (tenant_id, record_id, available_at) VALUES (?, ?, ?)';

/** Deletes a record's classification job: (tenant, record id). */
export const DELETE_RECORD_JOB = 'DELETE FROM classification_jobs WHERE tenant_id = ? AND record_id = ?';

/** Deletes a tenant's classification jobs: (tenant). */
export const ERASE_JOBS = 'DELETE FROM classification_jobs WHERE tenant_id = ?';

// Idempotency keys.

/** A key's claim that has not expired: (tenant, key, now). */
export const FIND_IDEMPOTENCY_KEY = 'SELECT request_hash, record_id FROM idempotency_keys WHERE tenant_id = ? AND key = ? AND expires_at > ?';

/** Claims a key for a record: (tenant, key, request hash, record id, expires at); it replaces an expired claim. */
export const PUT_IDEMPOTENCY_KEY = `
  INSERT INTO idempotency_keys (tenant_id, key, request_hash, record_id, expires_at) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (tenant_id, key) DO UPDATE SET
    request_hash = excluded.request_hash, record_id = excluded.record_id, expires_at = excluded.expires_at`;

/** Deletes the expired claims: (now). */
export const PURGE_IDEMPOTENCY_KEYS = 'DELETE FROM idempotency_keys WHERE expires_at <= ?';

/** Deletes a tenant's claims: (tenant). */
export const ERASE_IDEMPOTENCY_KEYS = 'DELETE FROM idempotency_keys WHERE tenant_id = ?';

// The search index, as a tenant's erase leaves it.

/** Makes the searches' tail caches and a merge under way read the records above the mark again (search-merge.ts). */
export const BUMP_TAIL = 'UPDATE search_state SET tail_gen = tail_gen + 1';

/** A tenant's key in the index's tables: (tenant). */
export const TENANT_KEY = 'SELECT key FROM search_tenants WHERE tenant = ?';

/** The index's tables that hold rows by tenant key, in the order an erase empties them. */
export const INDEX_TABLES = ['search_heads', 'search_metas', 'search_blocks', 'search_positions'] as const;

/** Deletes up to `?2` of a tenant's rows of one index table: (tenant key, rows). */
export const eraseIndexRows = (table: (typeof INDEX_TABLES)[number]) =>
  `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE tkey = ? LIMIT ?)`;

/** Empties a tenant's statistics: (key). Its row stays, since a tenant's key never changes (posting-storage.ts). */
export const RESET_TENANT_STATS = 'UPDATE search_tenants SET docs = 0, title_words = 0, body_words = 0 WHERE key = ?';

/** Deletes a tenant's newest times: (tenant). */
export const ERASE_NEWEST = 'DELETE FROM search_newest WHERE tenant_id = ?';
