import { join } from 'node:path';
import { MMAP_BYTES, openDatabase, openReadOnlyDatabase, openRelaxedDatabase } from '../../shared/adapters/local/database.js';
import { removeDir, tempDir } from '../support/child-server.js';

test("every connection to the database file reads it through a memory map: the server's, the search threads' and the merge's and classification's", () => {
  const dir = tempDir('memory-connections-');
  const file = join(dir, 'memory.db');
  const server = openDatabase(file);
  const reader = openReadOnlyDatabase(file);
  const relaxed = openRelaxedDatabase(file);
  try {
    for (const db of [server, reader, relaxed]) {
      // SQLite caps it at its build's ceiling (just under 2 GiB), and a build without maps would say 0.
      const mapped = db.pragma('mmap_size', { simple: true }) as number;
      expect(mapped).toBeGreaterThanOrEqual(Math.min(MMAP_BYTES, 2 ** 30));
      expect(mapped).toBeLessThanOrEqual(MMAP_BYTES);
    }
  } finally {
    for (const db of [server, reader, relaxed]) db.close();
    removeDir(dir);
  }
});
