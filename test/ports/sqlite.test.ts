import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteAdapters } from '../../shared/adapters/local/index.js';
import { SqliteRecordStore } from '../../shared/adapters/local/record-store.js';
import { runPortSuite } from './port-suite.js';

runPortSuite(
  'SQLite',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'memory-ports-'));
    const adapters = openSqliteAdapters(join(dir, 'memory.db'));
    return {
      ...adapters,
      recordsAt: (clock) => new SqliteRecordStore(adapters.db, clock),
      settle: async () => undefined,
      close: async () => {
        adapters.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  { createQueuesJob: true },
);
