import Database from 'better-sqlite3';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { adminCommand } from '../../local/admin.js';
import { BACKUP_PAGES_PER_STEP } from '../../shared/adapters/local/backup.js';
import { openDatabase, QUERY_COUNTS_FILE } from '../../shared/adapters/local/database.js';
import { openSqliteAdapters } from '../../shared/adapters/local/index.js';
import { removeDir, tempDir } from '../support/child-server.js';

/**
 * `admin backup` in process, on a database of several backup steps: a progress line per tenth of the copy
 * on stderr, each JSON, in order, and the copy whole. test/e2e/backup.test.ts runs it as a process beside a
 * server; test/model/backup.model.test.ts checks the snapshot.
 */

let dir: string;
beforeAll(() => {
  dir = tempDir('memory-admin-backup-');
});
afterAll(() => removeDir(dir));

test('a backup of a database larger than a step reports its progress by tenths on stderr, and the copy is whole', async () => {
  const dataDir = join(dir, 'data');
  const db = openDatabase(join(dataDir, 'memory.db'));
  // Some 6 MB of records, 1 500 pages and more: a copy of more than one step of BACKUP_PAGES_PER_STEP pages.
  const insert = db.prepare(`INSERT INTO records (seq, id, tenant_id, agent_id, type, title, body, created_at)
                             VALUES (?, ?, 't', 'agent', 'fact', ?, ?, '2026-01-01T00:00:00.000Z')`);
  db.transaction(() => {
    for (let i = 1; i <= 600; i++) insert.run(i, `id-${i}`, `Record ${i}`, `body ${i} `.repeat(1000));
  })();
  const pages = db.pragma('page_count', { simple: true }) as number;
  db.close();
  expect(pages).toBeGreaterThan(BACKUP_PAGES_PER_STEP);

  let err = '';
  const stderr = new PassThrough().setEncoding('utf8');
  stderr.on('data', (s: string) => (err += s));
  const file = join(dir, 'big.db');
  const result = (await adminCommand(['backup', '--to', file], { MEMORY_DATA_DIR: dataDir }, undefined, {
    stdin: Readable.from([]),
    stdout: new PassThrough(),
    stderr,
  })) as { records: number };
  await new Promise((r) => setImmediate(r));

  const lines = err.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { progress: string });
  expect(lines.length).toBeGreaterThan(0);
  expect(lines.length).toBeLessThanOrEqual(9);
  const copied = lines.map(({ progress }) => {
    const m = /^backup: (\d+) of (\d+) pages copied \((\d+) %\)$/.exec(progress);
    expect(m).not.toBeNull();
    expect(Number(m![2])).toBe(pages);
    return Number(m![1]);
  });
  expect(copied).toEqual([...copied].sort((a, b) => a - b));
  expect(result.records).toBe(600);
  const copy = new Database(file, { readonly: true, fileMustExist: true });
  try {
    expect(copy.prepare('PRAGMA integrity_check').pluck().get()).toBe('ok');
    expect(copy.prepare('SELECT count(*) FROM records').pluck().get()).toBe(600);
  } finally {
    copy.close();
  }
  expect(readdirSync(dir).sort()).toEqual(['big.db', 'data']);
});

test("a backup adds the query counts kept beside the database into its usage, and a restore refuses a directory that holds counts", async () => {
  const dataDir = join(dir, 'counted');
  const adapters = openSqliteAdapters(join(dataDir, 'memory.db'));
  // A month the database counted before the counts moved out (usage.queries), and counts since, of two tenants.
  adapters.db.prepare("INSERT INTO usage (tenant_id, month, records, queries) VALUES ('a', '2026-05', 3, 4)").run();
  for (let i = 0; i < 2; i++) expect(await adapters.usage.countQuery('a', '2026-05', 100)).toBe(true);
  expect(await adapters.usage.countQuery('b', '2026-05', 100)).toBe(true);
  expect(existsSync(join(dataDir, QUERY_COUNTS_FILE))).toBe(true);
  const io = () => ({ stdin: Readable.from([]), stdout: new PassThrough(), stderr: new PassThrough() });
  const file = join(dir, 'counted.db');
  await adminCommand(['backup', '--to', file], { MEMORY_DATA_DIR: dataDir }, undefined, io());
  adapters.close();
  // Again with the server stopped: the counts' file then has no -wal or -shm beside it.
  const stopped = join(dir, 'counted-stopped.db');
  await adminCommand(['backup', '--to', stopped], { MEMORY_DATA_DIR: dataDir }, undefined, io());
  for (const backup of [file, stopped]) {
    const copy = new Database(backup, { readonly: true, fileMustExist: true });
    try {
      expect(copy.prepare('SELECT tenant_id, month, records, queries FROM usage ORDER BY tenant_id').all()).toEqual([
        { tenant_id: 'a', month: '2026-05', records: 3, queries: 6 },
        { tenant_id: 'b', month: '2026-05', records: 0, queries: 1 },
      ]);
    } finally {
      copy.close();
    }
  }

  // Restored into a fresh directory, the usage is the same; a directory that has counts of its own is refused.
  const restored = join(dir, 'restored');
  await adminCommand(['restore', '--from', file], { MEMORY_DATA_DIR: restored }, undefined, io());
  const again = openSqliteAdapters(join(restored, 'memory.db'));
  try {
    expect(await again.usage.list('2026-05')).toEqual([
      { tenant_id: 'a', month: '2026-05', records: 3, queries: 6 },
      { tenant_id: 'b', month: '2026-05', records: 0, queries: 1 },
    ]);
  } finally {
    again.close();
  }
  const stale = join(dir, 'stale');
  mkdirSync(stale);
  writeFileSync(join(stale, QUERY_COUNTS_FILE), '');
  await expect(adminCommand(['restore', '--from', file], { MEMORY_DATA_DIR: stale }, undefined, io())).rejects.toMatchObject({ code: 'database_exists' });
  expect(readdirSync(stale)).toEqual([QUERY_COUNTS_FILE]);
});

test("a relative --to or --from is the caller's, from INIT_CWD under npm run admin (which runs the script in the package's directory)", async () => {
  const dataDir = join(dir, 'relative-data');
  openDatabase(join(dataDir, 'memory.db')).close();
  const caller = join(dir, 'caller');
  mkdirSync(caller);
  const io = () => ({ stdin: Readable.from([]), stdout: new PassThrough(), stderr: new PassThrough() });
  const npm = { INIT_CWD: caller, npm_lifecycle_event: 'admin' };
  await adminCommand(['backup', '--to', 'nightly.db'], { MEMORY_DATA_DIR: dataDir, ...npm }, undefined, io());
  expect(readdirSync(caller)).toEqual(['nightly.db']);
  const restored = join(dir, 'relative-restored');
  const result = (await adminCommand(['restore', '--from', 'nightly.db'], { MEMORY_DATA_DIR: restored, ...npm }, undefined, io())) as { from: string };
  expect(result.from).toBe(join(caller, 'nightly.db'));
  expect(existsSync(join(restored, 'memory.db'))).toBe(true);
});
