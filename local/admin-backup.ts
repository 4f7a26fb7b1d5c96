/**
 * The admin CLI's `backup` and `restore`: a copy of the SQLite database taken while the server runs and
 * writes (shared/adapters/local/backup.ts takes it as one snapshot), and that copy put back into a data
 * directory without a database. Neither ever leaves a part-written file under the name it was given: each
 * writes a temporary file beside it (`<name>.<pid>.partial`), makes it durable, and only then gives it the
 * name, with a rename (a backup that replaces one, with --force) or a hard link that fails if the name is
 * taken (a new backup, a restore), so that a file made meanwhile under that name is never replaced.
 */
import { existsSync, fsyncSync, linkSync, mkdirSync, openSync, closeSync, realpathSync, renameSync, rmSync, statSync, type Stats } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { BACKUP_PAGES_PER_STEP, backupDatabase, checkBackup, hasSqliteHeader, UnusableBackup } from '../shared/adapters/local/backup.js';
import { MIGRATIONS, QUERY_COUNTS_FILE } from '../shared/adapters/local/database.js';
import { causeOf, CliError } from './admin-cli-error.js';
import type { LocalConfig } from './config.js';

/** What `backup` prints. */
export interface BackupResult {
  file: string;
  bytes: number;
  records: number;
  tenants: number;
  schema_version: number;
  taken_at: string;
}

/** What `restore` prints. */
export interface RestoreResult {
  restored: string;
  from: string;
  bytes: number;
  records: number;
  tenants: number;
  schema_version: number;
}

/**
 * The database's files in a data directory: the database, the query counts kept beside it (a restored
 * database carries its counts in it, so stale ones there would count twice), and what SQLite keeps beside
 * each.
 */
const DATABASE_FILES = ['memory.db', QUERY_COUNTS_FILE].flatMap((file) => [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]);

/** A restore says what it is doing, on stderr, from a file this large. */
const LARGE_RESTORE_BYTES = 64 * 1024 * 1024;

/**
 * backup and restore copy the SQLite file; on the dynamodb backend they refuse, and say what backs DynamoDB
 * up instead. `backend` is --backend, or else MEMORY_BACKEND.
 */
export function requireSqliteBackend(command: string, backend: string | undefined): void {
  if (backend !== 'dynamodb') return;
  throw new CliError(
    'unsupported_backend',
    `${command} copies the SQLite database file (MEMORY_BACKEND=sqlite, the default); the dynamodb backend keeps its data in ` +
      "DynamoDB tables, which DynamoDB backs up itself: point-in-time recovery (the stack turns it on for every table; a " +
      'restore to any second of the last 35 days) and on-demand backups (aws dynamodb create-backup), each restored into ' +
      'new tables (docs/deploy.md). DynamoDB Local keeps its data in memory and has neither.',
  );
}

/**
 * `backup --to <file> [--force]`: copies the configured database into `to` as one snapshot while the server
 * runs, with a progress line per tenth of a large copy. Refuses a file that exists unless `force` (which
 * replaces it once the new copy is complete), a directory that does not exist, and the database's own files.
 */
export async function backupTo(to: string, force: boolean, config: LocalConfig, progress: (text: string) => void): Promise<BackupResult> {
  const database = config.databaseFile;
  if (!existsSync(database)) {
    throw new CliError(
      'no_database',
      `no database at ${database}: MEMORY_DATA_DIR (${config.dataDir}) is not a directory the server has started on, so there is ` +
        "nothing to back up. Set MEMORY_DATA_DIR to the server's data directory.",
      1,
      { path: database },
    );
  }
  const file = resolve(to);
  const dir = dirname(file);
  if (!statOf(dir)?.isDirectory()) throw invalidTarget(file, `its directory ${dir} does not exist; make it first`);
  const existing = statOf(file);
  if (existing?.isDirectory()) throw invalidTarget(file, `it is a directory; --to names the backup file, e.g. ${join(file, 'memory-backup.db')}`);
  if (isDatabaseFile(file, config.dataDir)) {
    throw invalidTarget(file, `it is the database itself (or one of its files) in MEMORY_DATA_DIR; write the backup elsewhere, best on another disk`);
  }
  if (existing && !force) throw fileExists(file);

  const temp = `${file}.${process.pid}.partial`;
  const summary = await withTemporary(temp, async () => {
    let summary;
    let placed = true;
    try {
      let shown = 0;
      summary = await backupDatabase(database, temp, {
        progress: (copied, total) => {
          // A line per tenth of a copy of more than one step; nothing for a small database.
          const tenth = Math.floor((copied * 10) / total);
          if (total > BACKUP_PAGES_PER_STEP && copied > 0 && copied < total && tenth > shown) {
            shown = tenth;
            progress(`backup: ${copied} of ${total} pages copied (${Math.round((copied / total) * 100)} %)`);
          }
        },
      });
      syncFile(temp);
      await signalsHandled();
      if (force) renameSync(temp, file);
      else placed = placeNew(temp, file);
    } catch (error) {
      throw new CliError('backup_failed', `the backup stopped: ${causeOf(error)}. Nothing was written at ${file}${existing ? ' (it is as it was)' : ''}.`, 1, {
        path: file,
      });
    }
    if (!placed) throw fileExists(file);
    return summary;
  });
  syncDirectory(dir);
  return {
    file,
    bytes: statSync(file).size,
    records: summary.records,
    tenants: summary.tenants,
    schema_version: summary.schemaVersion,
    taken_at: summary.takenAt,
  };
}

/**
 * `restore --from <file>`: puts a backup back as the configured data directory's database (making the
 * directory if need be), only where there is none. The file is copied, and the copy checked (checkBackup:
 * this service's database, a schema version this version can open, SQLite's integrity check), before it
 * takes the database's name. A backup of an older version is migrated when the server next opens it.
 */
export async function restoreFrom(from: string, config: LocalConfig, progress: (text: string) => void): Promise<RestoreResult> {
  const source = resolve(from);
  const sourceStat = statOf(source);
  if (!sourceStat) throw new CliError('no_file', `cannot read ${source}: there is no such file`, 1, { path: source });
  if (!sourceStat.isFile()) throw new CliError('no_file', `cannot read ${source}: it is not a file`, 1, { path: source });
  const present = DATABASE_FILES.filter((name) => existsSync(join(config.dataDir, name)));
  if (present.length > 0) throw databaseExists(config, present);
  let sqlite: boolean;
  try {
    sqlite = hasSqliteHeader(source);
  } catch (error) {
    throw new CliError('no_file', `cannot read ${source}: ${causeOf(error)}`, 1, { path: source });
  }
  if (!sqlite) throw invalidBackup(source, new UnusableBackup('not_sqlite', 'it is not an SQLite database (its first bytes are not "SQLite format 3")'));

  mkdirSync(config.dataDir, { recursive: true });
  const database = config.databaseFile;
  const temp = `${database}.${process.pid}.partial`;
  const large = sourceStat.size >= LARGE_RESTORE_BYTES;
  const checked = await withTemporary(temp, async () => {
    try {
      if (large) progress(`restore: copying ${megabytes(sourceStat.size)} MB from ${source}`);
      await copyFile(source, temp);
    } catch (error) {
      throw new CliError('restore_failed', `the restore stopped: ${causeOf(error)}. MEMORY_DATA_DIR (${config.dataDir}) holds no database, as before.`, 1, {
        path: source,
      });
    }
    if (large) progress('restore: checking the copy (SQLite integrity check)');
    let checked;
    try {
      checked = checkBackup(temp);
    } catch (error) {
      if (error instanceof UnusableBackup) throw invalidBackup(source, error);
      throw error;
    }
    let placed: boolean;
    try {
      syncFile(temp);
      await signalsHandled();
      placed = placeNew(temp, database);
    } catch (error) {
      throw new CliError('restore_failed', `the restore stopped: ${causeOf(error)}. MEMORY_DATA_DIR (${config.dataDir}) holds no database, as before.`, 1, {
        path: source,
      });
    }
    if (!placed) throw databaseExists(config, ['memory.db']);
    return checked;
  });
  syncDirectory(config.dataDir);
  if (checked.schemaVersion < MIGRATIONS.length) {
    progress(
      `restore: the backup's schema version is ${checked.schemaVersion}; the server migrates it to ${MIGRATIONS.length} when it ` +
        'starts, as an upgrade (with progress lines if the search index is rebuilt)',
    );
  }
  return {
    restored: database,
    from: source,
    bytes: statSync(database).size,
    records: checked.records,
    tenants: checked.tenants,
    schema_version: checked.schemaVersion,
  };
}

const statOf = (path: string): Stats | null => statSync(path, { throwIfNoEntry: false }) ?? null;

const megabytes = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

/** True when `file` is one of the database's files in `dataDir`, by their real paths (links and `..` resolved). */
function isDatabaseFile(file: string, dataDir: string): boolean {
  if (!existsSync(dataDir)) return false;
  const real = join(realpathSync(dirname(file)), basename(file));
  const dir = realpathSync(dataDir);
  return DATABASE_FILES.some((name) => join(dir, name) === real);
}

const invalidTarget = (file: string, why: string) => new CliError('invalid_target', `cannot write the backup to ${file}: ${why}`, 1, { path: file });

const fileExists = (file: string) =>
  new CliError(
    'file_exists',
    `${file} exists already, and backup does not replace a file unless told to: pass --force to replace it (the new backup ` +
      'takes its name only once it is complete, so a failed backup leaves the old file as it was), or choose another name',
    1,
    { path: file },
  );

function databaseExists(config: LocalConfig, present: string[]): CliError {
  return new CliError(
    'database_exists',
    `MEMORY_DATA_DIR (${config.dataDir}) holds a database already (${present.join(', ')}); restore writes only into a data ` +
      'directory without one, and changed nothing. Stop the server and restore into a new, empty directory (set MEMORY_DATA_DIR ' +
      "to it, then start the server there), or move the old database's files (memory.db, memory.db-wal, memory.db-shm) away first.",
    1,
    { path: config.dataDir, files: present },
  );
}

function invalidBackup(source: string, error: UnusableBackup): CliError {
  return new CliError('invalid_backup', `${source} cannot be restored: ${error.message}. Nothing was changed.`, 1, { path: source, problem: error.problem });
}

/**
 * Runs `work`, which writes `temp`; removes `temp` (and any file SQLite kept beside it) if `work` fails or
 * the process is interrupted (SIGINT, SIGTERM: removed, then the signal is raised again).
 */
async function withTemporary<T>(temp: string, work: () => Promise<T>): Promise<T> {
  const remove = () => {
    for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(temp + suffix, { force: true });
  };
  const interrupted = (signal: NodeJS.Signals) => {
    remove();
    stopListening();
    process.kill(process.pid, signal);
  };
  const stopListening = () => {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
  };
  remove();
  process.on('SIGINT', interrupted);
  process.on('SIGTERM', interrupted);
  try {
    return await work();
  } catch (error) {
    remove();
    throw error;
  } finally {
    stopListening();
  }
}

/**
 * Lets a signal that came during synchronous work (the copy's last step and its sync, the integrity
 * check) be handled before the file takes its name: Ctrl-C before that point removes the partial file and
 * stops the command (withTemporary), and is not left until after the name is given.
 */
const signalsHandled = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Gives `temp` the name `target` unless that name is taken: a hard link, which fails if it is (whatever
 * made it meanwhile), then the temporary name removed. Where the file system has no hard links, a check
 * and a rename. False, with `temp` left in place, when `target` exists.
 */
function placeNew(temp: string, target: string): boolean {
  try {
    linkSync(temp, target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EOPNOTSUPP') throw error;
    if (existsSync(target)) return false;
    renameSync(temp, target);
    return true;
  }
  rmSync(temp);
  return true;
}

/** Writes a file's data to the disk. */
function syncFile(path: string): void {
  const fd = openSync(path, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Writes a directory's entries (a new name in it) to the disk, where the platform can. */
function syncDirectory(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, 'r');
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch {
    // Not every platform syncs a directory (Windows cannot open one); the rename stands all the same.
  } finally {
    closeSync(fd);
  }
}
