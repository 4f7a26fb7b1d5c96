import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openQueryCounts, QUERY_COUNTS_FILE, type Db } from '../../shared/adapters/local/database.js';
import { openSqliteAdapters, type SqliteAdapters } from '../../shared/adapters/local/index.js';
import { SqliteUsageMeter } from '../../shared/adapters/local/usage-meter.js';
import type { StoredRecord } from '../../shared/domain/record.js';

/**
 * The query counter commits in a file of its own (query-counts.db) with synchronous = NORMAL, and with FULL
 * once a second while counts are unsynced; nothing of a search's count is written to the records' database.
 * The quota must hold exactly, counting what usage.queries held before the counts moved, and every count
 * must be in a file.
 */

const MONTH = '2026-05';
let dir: string;
let file: string;
let adapters: SqliteAdapters;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memory-usage-'));
  file = join(dir, 'memory.db');
  adapters = openSqliteAdapters(file);
});

afterEach(() => {
  adapters.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Rows changed by a connection since it opened: tells which connection ran the counts. */
const changesOf = (db: Db) => db.prepare('SELECT total_changes()').pluck().get() as number;

/** A meter whose counts' connection the test can see, on a clock the test moves; `synced` lists whether each count ran with FULL. */
function meterWithClock(syncEveryMs: number) {
  let now = 1_000_000;
  let counts: Db | null = null;
  const synced: boolean[] = [];
  const meter = new SqliteUsageMeter(adapters.db, {
    syncEveryMs,
    clock: () => now,
    openCounts: (db) => {
      counts = openQueryCounts(db);
      const count = counts.prepare.bind(counts);
      // Each statement's run is watched for the connection's synchronous setting at that moment.
      counts.prepare = ((sql: string) => {
        const statement = count(sql);
        if (!sql.includes('INSERT')) return statement;
        const run = statement.run.bind(statement);
        statement.run = ((...args: unknown[]) => (synced.push(counts!.pragma('synchronous', { simple: true }) === 2), run(...(args as [])))) as typeof statement.run;
        return statement;
      }) as typeof counts.prepare;
      return counts;
    },
  });
  return {
    meter,
    counts: () => counts!,
    synced,
    advance: (ms: number) => (now += ms),
  };
}

test('the counts are a file of their own beside the database, NORMAL and in WAL, opened at the first count; the main connection is not written', async () => {
  const { meter, counts } = meterWithClock(1000);
  const main0 = changesOf(adapters.db);
  expect(existsSync(join(dir, QUERY_COUNTS_FILE))).toBe(false);
  expect(await meter.countQuery('t', MONTH, 5)).toBe(true);
  expect(counts().name).toBe(join(dir, QUERY_COUNTS_FILE));
  expect(counts().pragma('synchronous', { simple: true })).toBe(1); // NORMAL
  expect(counts().pragma('journal_mode', { simple: true })).toBe('wal');
  expect(adapters.db.pragma('synchronous', { simple: true })).toBe(2); // FULL
  expect(changesOf(adapters.db)).toBe(main0);
  meter.close();
  expect(counts().open).toBe(false);
  expect(adapters.db.open).toBe(true);
});

test('a count of a month the records database counted before the move adds to what it holds, and the quota counts both', async () => {
  adapters.db.prepare("INSERT INTO usage (tenant_id, month, records, queries) VALUES ('t', ?, 2, 5)").run(MONTH);
  const { meter } = meterWithClock(1000);
  expect(await meter.countQuery('t', MONTH, 7)).toBe(true);
  expect(await meter.countQuery('t', MONTH, 7)).toBe(true);
  expect(await meter.countQuery('t', MONTH, 7)).toBe(false);
  expect(await meter.list(MONTH, 't')).toEqual([{ tenant_id: 't', month: MONTH, records: 2, queries: 7 }]);
  // A quota already passed before the move counts nothing.
  adapters.db.prepare("INSERT INTO usage (tenant_id, month, records, queries) VALUES ('u', ?, 0, 9)").run(MONTH);
  expect(await meter.countQuery('u', MONTH, 9)).toBe(false);
  expect(await meter.list(MONTH)).toEqual([
    { tenant_id: 't', month: MONTH, records: 2, queries: 7 },
    { tenant_id: 'u', month: MONTH, records: 0, queries: 9 },
  ]);
  meter.close();
});

test('the quota holds exactly at the boundary, whether a count syncs or not', async () => {
  const { meter, synced, advance } = meterWithClock(10);
  const answers: boolean[] = [];
  for (let i = 0; i < 12; i++) {
    answers.push(await meter.countQuery('t', MONTH, 7));
    advance(4); // every third count or so is past the sync interval and runs with FULL
  }
  expect(answers).toEqual([...Array(7).fill(true), ...Array(5).fill(false)]);
  expect(await meter.list(MONTH, 't')).toEqual([{ tenant_id: 't', month: MONTH, records: 0, queries: 7 }]);
  // Counts of both kinds ran.
  expect(synced.slice(0, 7)).toContain(true);
  expect(synced.slice(0, 7)).toContain(false);
  meter.close();
});

test('counts commit without an fsync until one comes a sync interval after the oldest unsynced count', async () => {
  const { meter, counts, synced, advance } = meterWithClock(1000);
  await meter.countQuery('t', MONTH, 100); // opens the counts' connection; unsynced from here
  for (let i = 0; i < 5; i++) {
    advance(100);
    await meter.countQuery('t', MONTH, 100);
  }
  expect(synced).toEqual(Array(6).fill(false));
  advance(600); // 1100 ms after the first unsynced count
  await meter.countQuery('t', MONTH, 100);
  expect(synced.at(-1)).toBe(true); // this one synced the log
  expect(counts().pragma('synchronous', { simple: true })).toBe(1); // and NORMAL again after it
  advance(10);
  await meter.countQuery('t', MONTH, 100);
  expect(synced.at(-1)).toBe(false); // the next is relaxed again
  expect(changesOf(counts())).toBe(8);
  expect((await meter.list(MONTH, 't'))[0]!.queries).toBe(8);
  meter.close();
});

test('a refused count writes nothing and does not count as a sync', async () => {
  const { meter, counts, advance } = meterWithClock(10);
  expect(await meter.countQuery('t', MONTH, 1)).toBe(true);
  advance(50);
  const counts0 = changesOf(counts());
  expect(await meter.countQuery('t', MONTH, 1)).toBe(false);
  expect(changesOf(counts())).toBe(counts0);
  expect(await meter.countQuery('t', MONTH, 0)).toBe(false);
  expect(await meter.list(MONTH)).toEqual([{ tenant_id: 't', month: MONTH, records: 0, queries: 1 }]);
  meter.close();
});

test("the query counter's counts and the record store's, from their two files, make one tenant-month", async () => {
  const tenant = await adapters.keys.createTenant({ name: 'a', limits: { recordQuota: 10, queryQuota: 10, rate: 1, burst: 1 } });
  const month = new Date().toISOString().slice(0, 7);
  const record = (i: number): StoredRecord => ({
    id: `rec-${i}`,
    tenant_id: tenant.tenant_id,
    agent_id: 'a',
    type: 'fact',
    title: `title ${i}`,
    body: 'body',
    client: null,
    metadata: null,
    created_at: new Date().toISOString(),
    classification: null,
    version: 1,
    updated_at: null,
    superseded_by: null,
  });
  for (let i = 0; i < 3; i++) {
    expect(await adapters.usage.countQuery(tenant.tenant_id, month, 10)).toBe(true);
    await adapters.records.create(tenant.tenant_id, record(i), { recordQuota: 10, month });
  }
  expect(await adapters.usage.list(month, tenant.tenant_id)).toEqual([{ tenant_id: tenant.tenant_id, month, records: 3, queries: 3 }]);
});

test('counts survive closing and reopening the file (a restart)', async () => {
  for (let i = 0; i < 4; i++) expect(await adapters.usage.countQuery('t', MONTH, 5)).toBe(true);
  adapters.close();
  adapters = openSqliteAdapters(file);
  expect(await adapters.usage.list(MONTH, 't')).toEqual([{ tenant_id: 't', month: MONTH, records: 0, queries: 4 }]);
  expect(await adapters.usage.countQuery('t', MONTH, 5)).toBe(true);
  expect(await adapters.usage.countQuery('t', MONTH, 5)).toBe(false);
});

test('an in-memory database counts on its one connection', async () => {
  const memory = openSqliteAdapters(':memory:');
  try {
    expect(await memory.usage.countQuery('t', MONTH, 2)).toBe(true);
    expect(await memory.usage.countQuery('t', MONTH, 2)).toBe(true);
    expect(await memory.usage.countQuery('t', MONTH, 2)).toBe(false);
    expect(await memory.usage.list(MONTH, 't')).toEqual([{ tenant_id: 't', month: MONTH, records: 0, queries: 2 }]);
  } finally {
    memory.close();
  }
});
