import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCorpus, tenantsFor } from '../../bench/corpus.js';
import { openSqliteAdapters, type SqliteAdapters } from '../../shared/adapters/local/index.js';
import { SearchMerge } from '../../shared/adapters/local/search-merge.js';
import { ThreadMerger, type SearchMerger } from '../../shared/adapters/local/search-merger.js';
import { parseQuery } from '../../shared/domain/query-parse.js';
import { newRecord } from '../../shared/domain/record.js';
import { indexProblems } from '../support/index-invariants.js';

/**
 * The merge on SQLite (search-merge.ts): records are searchable as soon as they are written, and a search
 * answers the same, to the rank, before, during and after the merges that take them into the index, on the
 * server's connection as on a merge thread, and after a merge cut short and resumed.
 */

const OPTIONS = { records: 3000, seed: 5 };
const QUERIES = ['ticket refund', 'dark mode', '"release notes"', 'when did we decide to deploy the service', 'budget invoice customer'];
const LIMITS = { recordQuota: 1e9, queryQuota: 1e9, rate: 1e6, burst: 1e6 };

/** Never merges on its own: the tests merge when they mean to. */
const manual: () => SearchMerger = () => ({ wake: () => undefined, close: async () => undefined });

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memory-merge-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Writes the corpus through the record store; returns the tenants' ids by name. */
async function write(adapters: SqliteAdapters, count = OPTIONS.records): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (const t of tenantsFor(OPTIONS)) ids.set(t.name, (await adapters.keys.createTenant({ name: t.name, limits: LIMITS })).tenant_id);
  const writes: Promise<unknown>[] = [];
  let n = 0;
  for (const { tenant, record } of generateCorpus(OPTIONS)) {
    if (n++ === count) break;
    const id = ids.get(tenant)!;
    writes.push(adapters.records.create(id, newRecord(id, record, new Date(Date.UTC(2026, 10, 1) + n)), { recordQuota: 1e9, month: '2026-11' }));
  }
  await Promise.all(writes);
  return ids;
}

/** Every query in every tenant: ids and ranks, best first. */
async function answers(adapters: SqliteAdapters, ids: Map<string, string>): Promise<string[]> {
  const out: string[] = [];
  for (const id of ids.values()) {
    for (const q of QUERIES) {
      const hits = await adapters.search.search(id, { text: parseQuery(q), limit: 20 });
      out.push(`${q}: ${hits.map((h) => `${h.id}@${h.rank}`).join(' ')}`);
    }
  }
  return out;
}

/** The engine's tables, row by row (tenants by their key: each database has tenants of its own ids). */
function dump(file: string): unknown {
  const db = new Database(file, { readonly: true });
  try {
    return ['search_tenants', 'search_heads', 'search_metas', 'search_blocks', 'search_state'].map((table) =>
      db
        .prepare(`SELECT * FROM ${table} ORDER BY 1, 2, 3`)
        .all()
        .map((row) => JSON.stringify({ ...(row as object), tenant: undefined }, (_, v) => (Buffer.isBuffer(v) ? v.toString('hex') : v))),
    );
  } finally {
    db.close();
  }
}

test('records are found as soon as they are written, and every search answers the same before, during and after the merge', async () => {
  const adapters = openSqliteAdapters(join(dir, 'memory.db'), { merger: manual });
  try {
    const ids = await write(adapters);
    const before = await answers(adapters, ids);
    expect(before.filter((a) => a.includes('@')).length).toBeGreaterThan(20);
    const merge = new SearchMerge(adapters.db);
    expect(merge.pending()).toBe(OPTIONS.records);
    // One batch in steps of one term each, stopped now and then: the searches in between see a batch half in.
    let steps = 0;
    const stopEvery = (n: number) => () => ++steps % n === 0;
    expect(merge.next(1000, 0, stopEvery(400))).toBe(0);
    expect(await answers(adapters, ids)).toEqual(before);
    expect(merge.next(1000, 0, stopEvery(900))).toBe(0);
    expect(await answers(adapters, ids)).toEqual(before);
    // Resumed, the batch completes; then the rest in one step each.
    expect(merge.next(1000, 0)).toBe(1000);
    expect(merge.pending()).toBe(2000);
    expect(await answers(adapters, ids)).toEqual(before);
    while (merge.next(700) > 0);
    expect(merge.pending()).toBe(0);
    expect(await answers(adapters, ids)).toEqual(before);
    // New records after the merge are the new tail, and found at once.
    const more = await adapters.records.create(ids.get('solo-dev')!, newRecord(ids.get('solo-dev')!, { agent_id: 'a', type: 'fact', title: 'Zebra crossing rules', body: 'Stop for the zebra.' }, new Date()), { recordQuota: 1e9, month: '2026-11' });
    expect((await adapters.search.search(ids.get('solo-dev')!, { text: parseQuery('zebra'), limit: 5 })).map((h) => h.id)).toEqual([more.receipt.id]);
  } finally {
    adapters.close();
  }
});

test('a merge cut short and resumed by another connection leaves the index a merge in one go leaves', async () => {
  const whole = join(dir, 'whole.db');
  const resumed = join(dir, 'resumed.db');
  for (const file of [whole, resumed]) {
    const adapters = openSqliteAdapters(file, { merger: manual });
    await write(adapters, 1500);
    adapters.close();
  }
  const one = openSqliteAdapters(whole, { merger: manual });
  new SearchMerge(one.db).next(1500);
  one.close();
  const cut = openSqliteAdapters(resumed, { merger: manual });
  let steps = 0;
  expect(new SearchMerge(cut.db).next(1500, 0, () => ++steps === 700)).toBe(0);
  cut.close();
  const again = openSqliteAdapters(resumed, { merger: manual });
  expect(new SearchMerge(again.db).next(1500)).toBe(1500);
  again.close();
  expect(dump(resumed)).toEqual(dump(whole));
});

test('a merge thread takes the records in while the server writes, and stops when told', async () => {
  const file = join(dir, 'memory.db');
  const events: string[] = [];
  const merger = new ThreadMerger(file, (event) => events.push(event.kind), { minDocs: 200, maxDelayMs: 50, maxDocs: 500 }, 1);
  const adapters = openSqliteAdapters(file, { merger: () => merger });
  try {
    const ids = await write(adapters);
    const before = await answers(adapters, ids);
    const merge = new SearchMerge(adapters.db);
    for (let waited = 0; merge.pending() > 0; waited += 50) {
      if (waited > 20_000) throw new Error(`the merge thread left ${merge.pending()} records`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(events).toContain('merged');
    expect(events).not.toContain('failed');
    expect(await answers(adapters, ids)).toEqual(before);
  } finally {
    await merger.close();
    adapters.close();
  }
});

test('a record written while a merge batch is under way, after the batch\'s newest record was deleted, is found (a seq is never given twice)', async () => {
  const adapters = openSqliteAdapters(join(dir, 'memory.db'), { merger: manual });
  try {
    const tenant = (await adapters.keys.createTenant({ name: 't', limits: LIMITS })).tenant_id;
    const write = (title: string, at: number) =>
      adapters.records.create(tenant, newRecord(tenant, { agent_id: 'a', type: 'fact', title, body: 'user notes' }, new Date(at)), { recordQuota: 1e9, month: '2026-11' });
    await write('user note first', 1);
    const newest = await write('user note second', 2);
    // A batch of both is read and its first term written; then the newest goes, a step reads the batch
    // again without it, and a new record comes before the batch ends. The new record used to take the
    // deleted one's seq: inside the batch, which moved the mark past it without indexing it.
    const batch = new SearchMerge(adapters.db).begin(10)!;
    expect(batch.step({ terms: 1 })).toBe('again');
    await adapters.records.delete(tenant, newest.receipt.id);
    expect(batch.step({ terms: 1 })).toBe('again');
    const late = await write('user note third, zebra', 3);
    while (batch.step({ terms: 1 }) === 'again');
    const found = async (q: string) => (await adapters.search.search(tenant, { text: parseQuery(q), limit: 5 })).map((h) => h.id);
    expect(await found('zebra')).toEqual([late.receipt.id]);
    expect((await found('user')).sort()).toEqual([late.receipt.id, (await adapters.records.list(tenant, { filters: {}, order: 'asc', limit: 1 }))[0]!.id].sort());
    expect(indexProblems(adapters.db)).toEqual([]);
    // Merged in, it is still found; its delete leaves the statistics at zero, never below.
    while (new SearchMerge(adapters.db).next(10) > 0);
    expect(await found('zebra')).toEqual([late.receipt.id]);
    expect(await adapters.records.delete(tenant, late.receipt.id)).not.toBeNull();
    expect(indexProblems(adapters.db)).toEqual([]);
  } finally {
    adapters.close();
  }
});
