import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteAdapters } from '../../shared/adapters/local/index.js';
import { SqliteRecordStore } from '../../shared/adapters/local/record-store.js';
import { SearchMerge } from '../../shared/adapters/local/search-merge.js';
import { SqliteSearchPool } from '../../shared/adapters/local/search-pool.js';
import { runPortSuite, type PortFixture } from './port-suite.js';

/** The SQLite adapters on a fresh file; with `searchThreads`, searching on that many worker threads. */
function sqliteFixture(searchThreads: number): () => Promise<PortFixture> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'memory-ports-'));
    const file = join(dir, 'memory.db');
    const adapters = openSqliteAdapters(file);
    const pool = searchThreads > 0 ? new SqliteSearchPool(file, { threads: searchThreads, timeoutMs: 10_000, maxWaiting: 1000 }) : null;
    return {
      ...adapters,
      search: pool ?? adapters.search,
      recordsAt: (clock) => new SqliteRecordStore(adapters.db, clock),
      settle: async () => undefined,
      indexAll: async () => {
        const merge = new SearchMerge(adapters.db);
        while (merge.next(1000) > 0);
      },
      close: async () => {
        await pool?.close();
        adapters.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  };
}

runPortSuite('SQLite', sqliteFixture(0), { createQueuesJob: true, ownRanks: { otherTenantRecords: 10_000 } });
runPortSuite('SQLite, searching on worker threads', sqliteFixture(2), { createQueuesJob: true, ownRanks: { otherTenantRecords: 10_000 } });
