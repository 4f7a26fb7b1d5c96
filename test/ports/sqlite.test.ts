import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteAdapters } from '../../shared/adapters/local/index.js';
import { runPortSuite } from './port-suite.js';

runPortSuite(
  'SQLite',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'memory-ports-'));
    const adapters = openSqliteAdapters(join(dir, 'memory.db'));
    return {
      ...adapters,
      settle: async () => undefined,
      close: async () => {
        adapters.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  { createQueuesJob: true },
);
