import Database from 'better-sqlite3';
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { MIGRATIONS, openReadOnlyDatabase, queryCountsFile } from './database.js';
import type { Db } from './db.js';

/**
 * Backups of the database file (the admin CLI's `backup` and `restore`, local/admin-backup.ts), with
 * SQLite's online backup API as better-sqlite3 exposes it, the query counts kept beside it added in.
 *
 * A backup is the database as it was at one instant, records and search index together, taken while the
 * server writes. SQLite's backup copies a few pages a step and, between steps, starts again from the first
 * page whenever another connection has written: under a steady stream of writes it never ends (a write
 * between every step of 100 pages kept a 1 400-page copy at its first step for as long as the writes went
 * on). So the backup's connection holds one read transaction from before its first step to after its
 * last: in WAL mode that transaction sees the database as it was when it began, the server's writes go on
 * beside it (they append to the log, which cannot be checkpointed past the snapshot until the backup ends),
 * and every step copies pages of that one snapshot. Nothing restarts, and the copy is that snapshot.
 */

/** What a backup holds, read in the snapshot it copies. */
export interface BackupSummary {
  /** Pages copied (of `page_size` bytes each). */
  pages: number;
  records: number;
  tenants: number;
  /** The schema version (`PRAGMA user_version`), the number of migrations applied (database.ts). */
  schemaVersion: number;
  /** When the snapshot was taken: the instant the backup's read transaction began. */
  takenAt: string;
}

export interface BackupOptions {
  /**
   * Called after each step with the pages copied so far and the pages in all; returns how many pages the
   * next step copies (by default BACKUP_PAGES_PER_STEP). Its first call, before any page is copied, has 0.
   */
  progress?: (copied: number, total: number) => number | void;
}

/** Pages a backup step copies by default: 4 MB at SQLite's default page size of 4 KB. */
export const BACKUP_PAGES_PER_STEP = 1024;

/**
 * Copies the database `source` into `target`, a new file, as one snapshot (see above), on a read-only
 * connection of its own: nothing is migrated or changed in `source`, and the server writes on while it
 * runs. The copy is then switched from WAL to a rollback journal, so that it is one self-contained file
 * (no `-wal` beside it, ever). Throws better-sqlite3's error when `source` cannot be read or `target`
 * written; `target` may then be left part-written, and is the caller's to remove.
 */
export async function backupDatabase(source: string, target: string, options: BackupOptions = {}): Promise<BackupSummary> {
  const db = openReadOnlyDatabase(source);
  let summary: Omit<BackupSummary, 'pages'>;
  let pages: number;
  try {
    db.exec('BEGIN');
    const takenAt = new Date().toISOString();
    // The first read starts the transaction's snapshot; everything after it, the copy included, reads that.
    summary = { ...counts(db), takenAt };
    const result = await db.backup(target, {
      progress: ({ totalPages, remainingPages }) => options.progress?.(totalPages - remainingPages, totalPages) ?? BACKUP_PAGES_PER_STEP,
    });
    pages = result.totalPages;
    db.exec('COMMIT');
  } finally {
    db.close();
  }
  const copy = new Database(target, { fileMustExist: true });
  try {
    copy.pragma('journal_mode = DELETE');
    foldQueryCounts(queryCountsFile(source), copy);
  } finally {
    copy.close();
  }
  return { pages, ...summary };
}

/**
 * Adds the query counts kept beside the database (usage-meter.ts) to the copy's `usage.queries`, so that a
 * backup is one file with every count in it; a database restored from it starts with no counts' file, and
 * counts on from there. Read just after the snapshot: a search counted meanwhile may be in it.
 */
function foldQueryCounts(file: string, copy: Db): void {
  if (!existsSync(file)) return;
  const counts = openReadOnlyDatabase(file);
  try {
    const rows = counts.prepare(`SELECT tenant_id, month, queries FROM query_counts`).all() as { tenant_id: string; month: string; queries: number }[];
    const add = copy.prepare(`INSERT INTO usage (tenant_id, month, queries) VALUES (@tenant_id, @month, @queries)
                              ON CONFLICT (tenant_id, month) DO UPDATE SET queries = queries + excluded.queries`);
    copy.transaction(() => rows.forEach((row) => add.run(row)))();
  } finally {
    counts.close();
  }
}

/** The records, tenants and schema version of an open database. */
function counts(db: Db): Omit<BackupSummary, 'pages' | 'takenAt'> {
  return {
    schemaVersion: db.pragma('user_version', { simple: true }) as number,
    records: db.prepare('SELECT count(*) FROM records').pluck().get() as number,
    tenants: db.prepare('SELECT count(*) FROM tenants').pluck().get() as number,
  };
}

/** The first 16 bytes of every SQLite database file. */
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/** True when `file` begins as an SQLite database does (read from the file alone, nothing opened as a database). */
export function hasSqliteHeader(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(SQLITE_HEADER.length);
    return readSync(fd, head, 0, head.length, 0) === head.length && head.equals(SQLITE_HEADER);
  } finally {
    closeSync(fd);
  }
}

/** Why a file cannot be restored: `problem` names the kind, `message` says it to an operator. */
export class UnusableBackup extends Error {
  constructor(
    readonly problem: 'not_sqlite' | 'not_this_service' | 'newer_schema' | 'corrupt',
    message: string,
  ) {
    super(message);
  }
}

/** The tables the first migration made, which every version of the database has. */
const TABLES_OF_EVERY_VERSION = ['tenants', 'api_keys', 'records', 'usage', 'idempotency_keys', 'classification_jobs'];

/** How many of integrity_check's problems an UnusableBackup quotes. */
const PROBLEMS_QUOTED = 5;

/**
 * Checks that `file` is a database of this service that this version can open, and whole: an SQLite file,
 * with the tables every version has, a schema version from 1 to this version's (an older one is migrated
 * when the server opens it, as an upgrade is), and `PRAGMA integrity_check` finding nothing. Opens it
 * read-write, without migrating or changing it (a file in WAL mode gets its `-wal` and `-shm` beside it
 * while it is open, removed at close): give it a copy, not a file a server uses. Throws UnusableBackup.
 */
export function checkBackup(file: string): Omit<BackupSummary, 'pages' | 'takenAt'> {
  if (!hasSqliteHeader(file)) throw new UnusableBackup('not_sqlite', 'it is not an SQLite database (its first bytes are not "SQLite format 3")');
  let db: Db;
  try {
    db = new Database(file, { fileMustExist: true });
  } catch (error) {
    throw new UnusableBackup('corrupt', `it is damaged: SQLite cannot open it (${(error as Error).message})`);
  }
  try {
    let version: number;
    let tables: string[];
    try {
      version = db.pragma('user_version', { simple: true }) as number;
      tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
    } catch (error) {
      throw new UnusableBackup('corrupt', `it is damaged: SQLite cannot read it (${(error as Error).message})`);
    }
    const missing = TABLES_OF_EVERY_VERSION.filter((t) => !tables.includes(t));
    if (version === 0 || missing.length > 0) {
      throw new UnusableBackup(
        'not_this_service',
        `it is an SQLite database, but not one of this service (${version === 0 ? 'it has no schema version' : `it has no table ${missing.join(', ')}`})`,
      );
    }
    if (version > MIGRATIONS.length) {
      throw new UnusableBackup(
        'newer_schema',
        `its schema version is ${version}, newer than this version of the service knows (${MIGRATIONS.length}): it was written by a later version; restore it with that version or a later one`,
      );
    }
    let problems: string[];
    try {
      problems = (db.prepare('PRAGMA integrity_check').pluck().all() as string[]).filter((p) => p !== 'ok');
    } catch (error) {
      throw new UnusableBackup('corrupt', `it is damaged: SQLite's integrity check failed (${(error as Error).message})`);
    }
    if (problems.length > 0) {
      throw new UnusableBackup(
        'corrupt',
        `it is damaged: SQLite's integrity check found ${problems.length === 100 ? '100 or more' : problems.length} problems, the first: ${problems.slice(0, PROBLEMS_QUOTED).join('; ')}`,
      );
    }
    return counts(db);
  } finally {
    db.close();
  }
}
