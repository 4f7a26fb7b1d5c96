import { openDatabase, type Db } from './database.js';
import { SqliteJobQueue } from './job-queue.js';
import { SqliteKeyStore } from './key-store.js';
import { SqliteRecordStore } from './record-store.js';
import { SqliteSearchIndex } from './search-index.js';
import { SqliteUsageMeter } from './usage-meter.js';

/** Every port, on one SQLite database. */
export interface SqliteAdapters {
  db: Db;
  records: SqliteRecordStore;
  search: SqliteSearchIndex;
  keys: SqliteKeyStore;
  usage: SqliteUsageMeter;
  jobs: SqliteJobQueue;
  close(): void;
}

/** Opens the database file (creating it unless `mustExist`, and migrating it) and builds the adapters on it. */
export function openSqliteAdapters(file: string, options: { mustExist?: boolean; progress?: (line: string) => void } = {}): SqliteAdapters {
  const db = openDatabase(file, options);
  const usage = new SqliteUsageMeter(db);
  return {
    db,
    records: new SqliteRecordStore(db),
    search: new SqliteSearchIndex(db),
    keys: new SqliteKeyStore(db),
    usage,
    jobs: new SqliteJobQueue(db),
    close: () => {
      usage.close();
      db.close();
    },
  };
}
