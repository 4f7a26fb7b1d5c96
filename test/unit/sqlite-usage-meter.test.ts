import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRelaxedConnection, type Db } from '../../shared/adapters/local/database.js';
import { openSqliteAdapters, type SqliteAdapters } from '../../shared/adapters/local/index.js';
import { SqliteUsageMeter } from '../../shared/adapters/local/usage-meter.js';
import type { StoredRecord } from '../../shared/domain/record.js';

/**
 * The query counter commits on a connection of its own with synchronous = NORMAL (no fsync on the server's
 * thread per search), and on the main connection (FULL) once a second while counts are unsynced. The quota
 * must hold exactly whichever connection counts, and every count must be in the file.
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

/** A meter whose counter connection the test can see, on a clock the test moves. */
function meterWithClock(syncEveryMs: number) {
  let now = 1_000_000;
  let counter: Db | null = null;
  const meter = new SqliteUsageMeter(adapters.db, {
    syncEveryMs,
    clock: () => now,
    openCounter: (db) => (counter = openRelaxedConnection(db)),
  });
  return {
    meter,
    counter: () => counter!,
    advance: (ms: number) => (now += ms),
  };
}

test('the counter connection is NORMAL and opened at the first count; the main one stays FULL', async () => {
  const { meter, counter } = meterWithClock(1000);
  expect(await meter.countQuery('t', MONTH, 5)).toBe(true);
  expect(counter().pragma('synchronous', { simple: true })).toBe(1); // NORMAL
  expect(counter().pragma('journal_mode', { simple: true })).toBe('wal');
  expect(adapters.db.pragma('synchronous', { simple: true })).toBe(2); // FULL
  meter.close();
  expect(counter().open).toBe(false);
  expect(adapters.db.open).toBe(true);
});

test('the quota holds exactly at the boundary, whichever connection counts', async () => {
  const { meter, counter, advance } = meterWithClock(10);
  const answers: boolean[] = [];
  for (let i = 0; i < 12; i++) {
    answers.push(await meter.countQuery('t', MONTH, 7));
    advance(4); // every third count or so is past the sync interval and runs on the main connection
  }
  expect(answers).toEqual([...Array(7).fill(true), ...Array(5).fill(false)]);
  expect(await meter.list(MONTH, 't')).toEqual([{ tenant_id: 't', month: MONTH, records: 0, queries: 7 }]);
  // Both connections counted.
  expect(changesOf(counter())).toBeGreaterThan(0);
  expect(changesOf(adapters.db)).toBeGreaterThan(0);
  meter.close();
});

test('counts commit without an fsync until one comes a sync interval after the oldest unsynced count', async () => {
  const { meter, counter, advance } = meterWithClock(1000);
  await meter.countQuery('t', MONTH, 100); // opens the counter connection; unsynced from here
  const main0 = changesOf(adapters.db);
  for (let i = 0; i < 5; i++) {
    advance(100);
    await meter.countQuery('t', MONTH, 100);
  }
  expect(changesOf(adapters.db)).toBe(main0); // all on the relaxed connection
  expect(changesOf(counter())).toBe(6);
  advance(600); // 1100 ms after the first unsynced count
  await meter.countQuery('t', MONTH, 100);
  expect(changesOf(adapters.db)).toBe(main0 + 1); // this one synced the log
  advance(10);
  await meter.countQuery('t', MONTH, 100);
  expect(changesOf(counter())).toBe(7); // and the next is relaxed again
  expect((await meter.list(MONTH, 't'))[0]!.queries).toBe(8);
  meter.close();
});

test('a refused count writes nothing and does not count as a sync', async () => {
  const { meter, advance } = meterWithClock(10);
  expect(await meter.countQuery('t', MONTH, 1)).toBe(true);
  advance(50);
  const main0 = changesOf(adapters.db);
  expect(await meter.countQuery('t', MONTH, 1)).toBe(false);
  expect(changesOf(adapters.db)).toBe(main0);
  expect(await meter.countQuery('t', MONTH, 0)).toBe(false);
  expect(await meter.list(MONTH)).toEqual([{ tenant_id: 't', month: MONTH, records: 0, queries: 1 }]);
  meter.close();
});

test("the query counter and the record store's counter share the row, from their two connections", async () => {
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
