import { openDatabase, type Db } from './database.js';
import { SqliteJobQueue } from './job-queue.js';
import { SqliteKeyStore } from './key-store.js';
import { SqliteRecordStore } from './record-store.js';
import { mergeBacklogAtOpen } from './search-merge.js';
import { SqliteSearchIndex } from './search-index.js';
import { InlineMerger, type SearchMerger } from './search-merger.js';
import { SqliteServiceSecrets } from './service-secrets.js';
import { SqliteUsageMeter } from './usage-meter.js';

/** Every port, on one SQLite database. */
export interface SqliteAdapters {
  db: Db;
  records: SqliteRecordStore;
  search: SqliteSearchIndex;
  keys: SqliteKeyStore;
  usage: SqliteUsageMeter;
  jobs: SqliteJobQueue;
  /** The service's own secrets, kept in the database: the key that seals listing cursors. */
  secrets: SqliteServiceSecrets;
  /** Who merges the records into the search index (search-merger.ts); the writes wake it. */
  merger: SearchMerger;
  /** Closes the database; a thread merger is the owner's to close first (its `close` waits for it). */
  close(): void;
}

export interface SqliteAdaptersOptions {
  /** A missing file is an error, and nothing is created (openDatabase): for the admin CLI. */
  mustExist?: boolean;
  /**
   * Given, the process is the one that serves searches (the server): a large backlog of records above the
   * search index's merge mark (an upgraded database) is merged before anything else, with `progress` lines
   * (search-merge.ts, mergeBacklogAtOpen), and an upgrade's migrations are told there too (database.ts). Other processes (the admin CLI, a benchmark that looks at the
   * server's file) leave merging to the server.
   */
  progress?: (line: string) => void;
  /** The merger, given the open database; by default one that merges on this thread (InlineMerger). */
  merger?: (db: Db) => SearchMerger;
  /** What the search connection keeps of the index's blocks between searches (BLOCK_CACHE_BYTES unless given). */
  blockCacheBytes?: number;
}

/** Opens the database file (creating it unless `mustExist`, and migrating it) and builds the adapters on it. */
export function openSqliteAdapters(file: string, options: SqliteAdaptersOptions = {}): SqliteAdapters {
  const db = openDatabase(file, { mustExist: options.mustExist ?? false, progress: options.progress });
  if (options.progress) mergeBacklogAtOpen(db, options.progress);
  const usage = new SqliteUsageMeter(db);
  const merger = options.merger?.(db) ?? new InlineMerger(db);
  return {
    db,
    merger,
    records: new SqliteRecordStore(db, Date.now, merger),
    search: new SqliteSearchIndex(db, { blockCacheBytes: options.blockCacheBytes }),
    keys: new SqliteKeyStore(db),
    usage,
    jobs: new SqliteJobQueue(db),
    secrets: new SqliteServiceSecrets(db),
    close: () => {
      if (merger instanceof InlineMerger) void merger.close();
      usage.close();
      db.close();
    },
  };
}
