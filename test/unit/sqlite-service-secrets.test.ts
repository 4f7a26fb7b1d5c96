import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../shared/adapters/local/database.js';
import { openSqliteAdapters } from '../../shared/adapters/local/index.js';
import { SqliteServiceSecrets } from '../../shared/adapters/local/service-secrets.js';

/** The service's secrets in its SQLite file: made once, kept with the data, new with new data. */

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memory-secrets-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('the cursor key is 32 random bytes, made on first need and read back the same after a reopen', () => {
  const file = join(dir, 'memory.db');
  const first = openSqliteAdapters(file);
  expect(first.db.prepare('SELECT count(*) AS n FROM service_secrets').get()).toEqual({ n: 0 });
  const key = first.secrets.get('cursor-key');
  expect(key).toHaveLength(32);
  expect(first.secrets.get('cursor-key').equals(key)).toBe(true);
  first.close();

  const reopened = openSqliteAdapters(file);
  expect(reopened.secrets.get('cursor-key').equals(key)).toBe(true);
  reopened.close();
});

test('another database (a new data directory) gets another key', () => {
  const a = openSqliteAdapters(join(dir, 'a', 'memory.db'));
  const b = openSqliteAdapters(join(dir, 'b', 'memory.db'));
  expect(a.secrets.get('cursor-key').equals(b.secrets.get('cursor-key'))).toBe(false);
  a.close();
  b.close();
});

test('two connections to one file (the server and the admin CLI) agree on the key, whichever makes it', () => {
  const file = join(dir, 'memory.db');
  const server = openDatabase(file);
  const cli = openDatabase(file);
  const fromCli = new SqliteServiceSecrets(cli).get('cursor-key');
  expect(new SqliteServiceSecrets(server).get('cursor-key').equals(fromCli)).toBe(true);
  expect(server.prepare('SELECT count(*) AS n FROM service_secrets').get()).toEqual({ n: 1 });
  server.close();
  cli.close();
});
