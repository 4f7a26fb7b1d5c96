import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Db } from './db.js';
import { NEWEST_TABLE_SQL } from './newest.js';
import { BLOCK_GENERATION_SQL, POSTING_TABLES_SQL } from './posting-storage.js';
import { SEQ_MOVE_TRIGGERS_SQL, SEQ_TRIGGERS_SQL } from './rows.js';

export type { Db } from './db.js';

/**
 * Schema migrations, applied in order and tracked in `PRAGMA user_version`. Append; never edit a shipped one.
 *
 * The first migration made `records_fts`, a contentless FTS5 table; the third replaces it with the tables
 * of the search engine (posting-storage.ts), which keeps its statistics per tenant and prunes.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE tenants (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    record_quota INTEGER NOT NULL,
    query_quota INTEGER NOT NULL,
    rate REAL NOT NULL,
    burst INTEGER NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT;

  CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    key_hash TEXT NOT NULL UNIQUE,
    rate REAL,
    burst INTEGER,
    status TEXT NOT NULL CHECK (status IN ('active', 'revoked')),
    created_at TEXT NOT NULL,
    revoked_at TEXT
  ) STRICT;
  CREATE INDEX api_keys_tenant ON api_keys(tenant_id, created_at);

  CREATE TABLE records (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    tenant_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    type TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    client TEXT,
    metadata TEXT,
    created_at TEXT NOT NULL,
    classification TEXT
  ) STRICT;
  CREATE INDEX records_tenant_recent ON records(tenant_id, created_at DESC, seq DESC);

  CREATE VIRTUAL TABLE records_fts USING fts5(
    title, body, tenant,
    content = '', contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
  );

  CREATE TABLE usage (
    tenant_id TEXT NOT NULL,
    month TEXT NOT NULL,
    records INTEGER NOT NULL DEFAULT 0,
    queries INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, month)
  ) STRICT, WITHOUT ROWID;

  CREATE TABLE idempotency_keys (
    tenant_id TEXT NOT NULL,
    key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    record_id TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, key)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX idempotency_keys_expiry ON idempotency_keys(expires_at);

  CREATE TABLE classification_jobs (
    id INTEGER PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    record_id TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'ready' CHECK (state IN ('ready', 'dead')),
    attempts INTEGER NOT NULL DEFAULT 0,
    available_at INTEGER NOT NULL,
    last_error TEXT
  ) STRICT;
  CREATE INDEX classification_jobs_ready ON classification_jobs(state, available_at);
  `,
  // The columns a filtered search checks, by seq: the search reads them from this index for every match
  // instead of each match's whole row, whose body comes before `client` and `created_at` (search-index.ts).
  `
  CREATE INDEX records_filters ON records(seq, tenant_id, agent_id, type, client, created_at);
  `,
  // The search engine of shared/search replaces FTS5 (docs/architecture.md, "Search"): its tables, with the
  // merge mark at 0, so that the records already stored are the tail until a merge takes them in (at open,
  // when there are many: search-merge.ts). The filters' index starts with the tenant now, so that a search
  // reads its tenant's tail from it, and asks it about a window of documents (a range of the tenant's seq)
  // without scanning the other tenants' records in between; and an index by agent, from which a search by
  // agent takes the agent's records (an agent's key searches only its own).
  `
  ${POSTING_TABLES_SQL}
  DROP TABLE records_fts;
  DROP INDEX records_filters;
  CREATE INDEX records_tenant_filters ON records(tenant_id, seq, agent_id, type, client, created_at);
  CREATE INDEX records_tenant_agent_recent ON records(tenant_id, agent_id, created_at DESC, seq DESC);
  `,
  // The newest creation time per tenant and block of records, so that a search filtered by `since`
  // skips the blocks of older records unread (newest.ts).
  NEWEST_TABLE_SQL,
  // Listing pages by (created_at, id) (docs/api.md, "Listing"): the tenant's index by creation time and the
  // agent's end in the id instead of the seq, so that a page is one range of an index in the listing's own
  // order, whatever the filters' selectivity. The same number of indexes; the agent's still holds the seq
  // (the rowid is in every index), which the search's agent set reads. And the classification jobs by
  // record, which a delete removes with its record: without it, each delete read every pending job.
  `
  DROP INDEX records_tenant_recent;
  DROP INDEX records_tenant_agent_recent;
  CREATE INDEX records_tenant_created ON records(tenant_id, created_at, id);
  CREATE INDEX records_tenant_agent_created ON records(tenant_id, agent_id, created_at, id);
  CREATE INDEX classification_jobs_record ON classification_jobs(tenant_id, record_id);
  `,
  // Keys that can do less than everything (docs/api.md, "Keys with scopes"): their scopes (a comma list;
  // every scope for the keys made before), the one agent a key may be bound to, its end, and the last day
  // it was used on.
  `
  ALTER TABLE api_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT 'read,write,delete';
  ALTER TABLE api_keys ADD COLUMN agent_id TEXT;
  ALTER TABLE api_keys ADD COLUMN expires_at TEXT;
  ALTER TABLE api_keys ADD COLUMN last_used_on TEXT;
  `,
  // A record's seq is never given twice (invariant 1 in search-merge.ts). It was the largest stored seq
  // plus one, so a record written after the newest one was deleted took the deleted one's seq, inside a
  // merge batch already read, and was lost from search for good. The counter starts above every seq a
  // record, the merge mark or a term's own mark has used; the triggers keep it, whichever statement inserts.
  // An index that lost records so is rebuilt: where a tenant's document count is not the number of its
  // records up to the mark (invariant 4), the whole index goes back to the tail (the mark to 0, every
  // tenant's statistics to 0, their keys kept), and the server merges it again at start, with progress
  // lines, as after migration 3. An index without that damage is left as it is.
  `
  ALTER TABLE search_state ADD COLUMN last_seq INTEGER NOT NULL DEFAULT 0;
  UPDATE search_state SET last_seq = max(merged_upto, coalesce((SELECT max(seq) FROM records), 0), coalesce((SELECT max(merged) FROM search_heads), 0));
  ${SEQ_TRIGGERS_SQL}
  CREATE TEMP TABLE damaged AS
    SELECT 1 FROM (SELECT tenant_id, count(*) AS docs FROM records WHERE seq <= (SELECT merged_upto FROM search_state) GROUP BY tenant_id) r
    FULL JOIN search_tenants t ON t.tenant = r.tenant_id
    WHERE coalesce(r.docs, 0) != coalesce(t.docs, 0) LIMIT 1;
  DELETE FROM search_heads WHERE EXISTS (SELECT 1 FROM temp.damaged);
  DELETE FROM search_metas WHERE EXISTS (SELECT 1 FROM temp.damaged);
  DELETE FROM search_blocks WHERE EXISTS (SELECT 1 FROM temp.damaged);
  DELETE FROM search_positions WHERE EXISTS (SELECT 1 FROM temp.damaged);
  DELETE FROM search_newest WHERE EXISTS (SELECT 1 FROM temp.damaged);
  UPDATE search_tenants SET docs = 0, title_words = 0, body_words = 0 WHERE EXISTS (SELECT 1 FROM temp.damaged);
  UPDATE search_state SET merged_upto = 0, tail_gen = tail_gen + 1 WHERE EXISTS (SELECT 1 FROM temp.damaged);
  DROP TABLE temp.damaged;
  `,
  // The service's own secrets, kept with the data they protect (service-secrets.ts): the key that seals
  // listing cursors, made on first need from crypto.randomBytes. A restart reads the same key, so cursors
  // stay valid; a new data directory makes a new one.
  `
  CREATE TABLE service_secrets (
    name TEXT PRIMARY KEY,
    value BLOB NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT, WITHOUT ROWID;
  `,
  // Records that can be corrected (docs/architecture.md, "Updates and supersedes"): a version (1 for every
  // record stored before), when it was last updated, and the record that supersedes it. The superseded
  // records by tenant and seq, in a partial index that holds only them: a search asks it which of a tenant's
  // documents to leave out, which costs one probe of an empty range for a tenant that has none; it holds
  // superseded_by too, so that SQLite reads it alone (a covering index), never the rows. An update that
  // changes a record's text moves it to a new seq, from the same counter as an insert (rows.ts).
  `
  ALTER TABLE records ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
  ALTER TABLE records ADD COLUMN updated_at TEXT;
  ALTER TABLE records ADD COLUMN superseded_by TEXT;
  CREATE INDEX records_superseded ON records(tenant_id, seq, superseded_by) WHERE superseded_by IS NOT NULL;
  ${SEQ_MOVE_TRIGGERS_SQL}
  `,
  // The analyzer reads English clitics and identifiers (docs/api.md, "How `q` is read"): "user's" is now
  // "user" where it was "user" and "s", and "INV-2024-0042" is a term of its own besides its words. Terms
  // indexed before are wrong for the new query side, so the whole index goes back to the tail, as migration 7
  // does to a damaged one (the mark to 0, every tenant's statistics to 0, their keys kept), and the server
  // merges it again at start, with progress lines. Searches meanwhile read the tail, analyzed anew.
  `
  DELETE FROM search_heads;
  DELETE FROM search_metas;
  DELETE FROM search_blocks;
  DELETE FROM search_positions;
  DELETE FROM search_newest;
  UPDATE search_tenants SET docs = 0, title_words = 0, body_words = 0;
  UPDATE search_state SET merged_upto = 0, tail_gen = tail_gen + 1;
  `,
  // The search connections keep the blocks they read between searches (block-cache.ts); a count of the
  // changes to stored blocks tells them when what they keep is stale (posting-storage.ts).
  BLOCK_GENERATION_SQL,
  // A search or a listing by a type or a client, without `q`, walks the tenant's (or the agent's) records
  // newest first until enough of them match: the two indexes it walks now end in `type` and `client`, so
  // that SQLite checks each record on its index entry and reads the rows of those that match alone, where it
  // read every row it passed, body and all. A client of one record in a thousand, in a tenant of 250 000
  // records: 45 ms, now 8.5 (docs/benchmarks.md). The same indexes, each entry wider by two short columns: a
  // write costs the same within the noise (53 against 54 µs a record, measured).
  `
  DROP INDEX records_tenant_created;
  CREATE INDEX records_tenant_created ON records(tenant_id, created_at, id, type, client);
  DROP INDEX records_tenant_agent_created;
  CREATE INDEX records_tenant_agent_created ON records(tenant_id, agent_id, created_at, id, type, client);
  `,
  // A count of the changes to what a key's authorization says (a key revoked, ended, given other scopes,
  // limits or agent, or deleted; a tenant's limits changed, or the tenant deleted), moved by triggers in
  // whichever process makes the change: the server's gateway reuses a cached authorization only while the
  // count stands (SqliteKeyStore.authGeneration), so a key the admin CLI revokes is refused at once. A
  // key's last day of use moves nothing, nor does a new key or tenant, which no cache holds yet.
  `
  CREATE TABLE auth_changes (id INTEGER PRIMARY KEY CHECK (id = 1), generation INTEGER NOT NULL) STRICT;
  INSERT INTO auth_changes (id, generation) VALUES (1, 0);
  CREATE TRIGGER api_keys_auth_update AFTER UPDATE OF tenant_id, key_hash, rate, burst, status, scopes, agent_id, expires_at ON api_keys
    BEGIN UPDATE auth_changes SET generation = generation + 1; END;
  CREATE TRIGGER api_keys_auth_delete AFTER DELETE ON api_keys BEGIN UPDATE auth_changes SET generation = generation + 1; END;
  CREATE TRIGGER tenants_auth_update AFTER UPDATE ON tenants BEGIN UPDATE auth_changes SET generation = generation + 1; END;
  CREATE TRIGGER tenants_auth_delete AFTER DELETE ON tenants BEGIN UPDATE auth_changes SET generation = generation + 1; END;
  `,
  // Record ids are unique per tenant, not across the database (decisions.md: an export imported into an
  // empty tenant gives records equal to the originals, field by field, and that tenant may sit beside the
  // original in the same database). SQLite cannot drop a column's UNIQUE, so the table is made again with
  // UNIQUE (tenant_id, id), every row copied with its seq (the search index's documents, which stay as they
  // are), and its indexes and triggers made again as migrations 3, 7, 9 and 12 left them. The lookups by id
  // all name the tenant, and read the new constraint's index. About 22 s at a million records (docs/running.md, "Upgrades").
  `
  CREATE TABLE records_by_tenant (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    type TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    client TEXT,
    metadata TEXT,
    created_at TEXT NOT NULL,
    classification TEXT,
    version INTEGER NOT NULL DEFAULT 1,
    updated_at TEXT,
    superseded_by TEXT,
    UNIQUE (tenant_id, id)
  ) STRICT;
  INSERT INTO records_by_tenant (seq, id, tenant_id, agent_id, type, title, body, client, metadata, created_at, classification, version, updated_at, superseded_by)
    SELECT seq, id, tenant_id, agent_id, type, title, body, client, metadata, created_at, classification, version, updated_at, superseded_by FROM records ORDER BY seq;
  DROP TABLE records;
  ALTER TABLE records_by_tenant RENAME TO records;
  CREATE INDEX records_tenant_filters ON records(tenant_id, seq, agent_id, type, client, created_at);
  CREATE INDEX records_tenant_created ON records(tenant_id, created_at, id, type, client);
  CREATE INDEX records_tenant_agent_created ON records(tenant_id, agent_id, created_at, id, type, client);
  CREATE INDEX records_superseded ON records(tenant_id, seq, superseded_by) WHERE superseded_by IS NOT NULL;
  ${SEQ_TRIGGERS_SQL}
  ${SEQ_MOVE_TRIGGERS_SQL}
  `,
];

/**
 * Opens (and creates or migrates) the service's database.
 *
 * Durability: WAL with `synchronous = FULL`. In WAL mode FULL syncs the log at every commit, so a
 * transaction that has returned survives a power cut as well as a process crash; NORMAL would survive
 * `kill -9` but could lose the last commits on power loss, which breaks the promise that a 201 is durable.
 * `busy_timeout` lets the admin CLI and the server share the file.
 *
 * With `mustExist`, a missing file is an error (better-sqlite3's) and nothing is created, not even the
 * directory: the admin CLI must not start a new, empty database beside the one the server uses.
 */
export function openDatabase(file: string, { mustExist = false, progress }: { mustExist?: boolean; progress?: (line: string) => void } = {}): Db {
  if (file !== ':memory:' && !mustExist) mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file, { fileMustExist: mustExist });
  // busy_timeout first, so that even switching a new file to WAL waits for another process opening it.
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma(`mmap_size = ${MMAP_BYTES}`);
  // The merge thread checkpoints after each merge, off the server's thread; this is the bound when it
  // does not (SQLite's default is 1 000 pages, which a merge's steps pass every few seconds).
  db.pragma('wal_autocheckpoint = 10000');
  try {
    migrate(db, progress);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/**
 * How much of the database file each connection reads through a memory map rather than `read` calls (SQLite's
 * `mmap_size`; the build's ceiling is 2 GiB): a page then comes from the operating system's cache without a
 * system call or a copy into the connection's own cache, which is 2 MB and each connection's own, so the
 * server's connection and every search thread's share one copy of the pages they read. Writes still go
 * through `write` calls. The file never shrinks (no VACUUM runs, and auto_vacuum is off), so no mapped page
 * goes away under a reader (a truncated mapping would be a SIGBUS, not an error). Over HTTP at 100 000
 * records, 0.91 of the time a search took unmapped, and 9 % less of the server's CPU (docs/benchmarks.md,
 * "Where a request's time goes").
 */
export const MMAP_BYTES = 2 ** 31;

/**
 * Opens an existing database file for reading only, as the search threads do (search-pool.ts): no
 * migrations, no WAL switch (the server's connection has made both), and the same `busy_timeout`.
 */
export function openReadOnlyDatabase(file: string): Db {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  db.pragma(`mmap_size = ${MMAP_BYTES}`);
  return db;
}

/** The query counts' file (usage-meter.ts), beside the database file. */
export const QUERY_COUNTS_FILE = 'query-counts.db';

/** Where the query counts of the database `file` are kept: QUERY_COUNTS_FILE in the same directory. */
export function queryCountsFile(file: string): string {
  return join(dirname(file), QUERY_COUNTS_FILE);
}

/** The query counts' one table: the searches each tenant made in each month, since the counts moved here. */
export const QUERY_COUNTS_SQL = `
  CREATE TABLE IF NOT EXISTS query_counts (
    tenant_id TEXT NOT NULL,
    month TEXT NOT NULL,
    queries INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, month)
  ) STRICT, WITHOUT ROWID`;

/**
 * The query counts of the database `db` has open (usage-meter.ts): their own file, created if need be, in
 * WAL mode with `synchronous = NORMAL` (a commit survives a crash of the process as soon as it returns; a
 * power cut can lose what no fsync has covered yet). Their own file, so that counting a search commits
 * nothing to the database: every commit there makes each other connection drop its page cache before its
 * next read, and the search threads' and the server's reads then start cold. An in-memory database has no
 * directory, so its counts are a table of its own.
 */
export function openQueryCounts(db: Db): Db {
  if (db.memory) {
    db.exec(QUERY_COUNTS_SQL);
    return db;
  }
  const counts = new Database(queryCountsFile(db.name));
  counts.pragma('busy_timeout = 5000');
  counts.pragma('journal_mode = WAL');
  counts.pragma('synchronous = NORMAL');
  counts.exec(QUERY_COUNTS_SQL);
  return counts;
}

/**
 * A read-write connection to an existing database file with `synchronous = NORMAL`, for writes that may be
 * lost on power loss: the classification thread's, whose lost work its jobs redo, and the merge thread's,
 * whose lost merges the next one redoes (search-merge-thread.ts).
 */
export function openRelaxedDatabase(file: string): Db {
  const relaxed = new Database(file, { fileMustExist: true });
  relaxed.pragma('busy_timeout = 5000');
  relaxed.pragma('synchronous = NORMAL');
  relaxed.pragma('foreign_keys = ON');
  relaxed.pragma(`mmap_size = ${MMAP_BYTES}`);
  return relaxed;
}

/**
 * Applies the migrations the file has not had, in one transaction. Some rebuild an index of every record
 * (migration 12: some 4 s at a million records), so an existing database's upgrade is told in `progress`
 * lines, its start and its end; a new file's is not.
 */
function migrate(db: Db, progress: (line: string) => void = () => undefined): void {
  const apply = db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    // A later version of the service migrated this file: this one would read and write tables it does not
    // know the shape of. Going back is restoring the backup taken before the upgrade (docs/running.md).
    if (version > MIGRATIONS.length) {
      throw new Error(
        `the database ${db.name} has schema version ${version}, newer than this version of the service knows (${MIGRATIONS.length}): ` +
          'a later version migrated it. Run that version or a later one, or restore a backup taken before the upgrade (docs/running.md, "Upgrades").',
      );
    }
    const upgrade = version > 0 && version < MIGRATIONS.length;
    const started = Date.now();
    if (upgrade) progress(`database: migrating from schema version ${version} to ${MIGRATIONS.length}`);
    for (let v = version; v < MIGRATIONS.length; v++) {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    }
    if (upgrade) progress(`database: migrated to schema version ${MIGRATIONS.length} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });
  apply.immediate();
}
