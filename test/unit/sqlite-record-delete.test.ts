import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCorpus } from '../../bench/corpus.js';
import { openSqliteAdapters, type SqliteAdapters } from '../../shared/adapters/local/index.js';
import { SearchMerge } from '../../shared/adapters/local/search-merge.js';
import type { SearchMerger } from '../../shared/adapters/local/search-merger.js';
import { parseQuery } from '../../shared/domain/query-parse.js';
import { newRecord } from '../../shared/domain/record.js';

/**
 * A delete on SQLite (SqliteRecordStore.delete) takes the record, its search index entries and its
 * classification job away in one transaction, and leaves the search statistics exact: a tenant that
 * deleted some records ranks exactly as a tenant that never had them, wherever the merge had got to.
 */

const LIMITS = { recordQuota: 1e9, queryQuota: 1e9, rate: 1e6, burst: 1e6 };
const manual: () => SearchMerger = () => ({ wake: () => undefined, close: async () => undefined });
const QUERIES = ['ticket refund', 'dark mode', '"release notes"', 'when did we decide to deploy the service', 'budget invoice customer', 'team'];

let dir: string;
let adapters: SqliteAdapters;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memory-delete-'));
  adapters = openSqliteAdapters(join(dir, 'memory.db'), { merger: manual });
});
afterEach(() => {
  adapters.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every query's answer in a tenant, as titles and ranks (the records differ in id from tenant to tenant). */
async function answers(tenantId: string): Promise<string[]> {
  const out: string[] = [];
  for (const q of QUERIES) {
    const hits = await adapters.search.search(tenantId, { text: parseQuery(q), limit: 20 });
    out.push(`${q}: ${hits.map((h) => `${h.title}@${h.rank}`).join(' | ')}`);
  }
  return out;
}

test.each([
  ['all in the tail', 0],
  ['part merged', 700],
  ['all merged', 1200],
])('a tenant that deleted records ranks as one that never had them (%s), and after the merge too', async (_, mergeFirst) => {
  const deleting = (await adapters.keys.createTenant({ name: 'deleting', limits: LIMITS })).tenant_id;
  const never = (await adapters.keys.createTenant({ name: 'never', limits: LIMITS })).tenant_id;
  const doomed: string[] = [];
  let n = 0;
  // The same records in both tenants, written in turn so that their order (and ties) is the same; every
  // seventh only in the tenant that deletes it later.
  for (const { record } of generateCorpus({ records: 600, seed: 3 })) {
    const at = new Date(Date.UTC(2026, 10, 1) + n++ * 1000);
    const mine = newRecord(deleting, record, at);
    await adapters.records.create(deleting, mine, { recordQuota: 1e9, month: '2026-11' });
    if (n % 7 === 0) doomed.push(mine.id);
    else await adapters.records.create(never, newRecord(never, record, at), { recordQuota: 1e9, month: '2026-11' });
  }
  const merge = new SearchMerge(adapters.db);
  while (mergeFirst > 0 && merge.pending() > 1200 - mergeFirst) merge.next(100);
  expect(await answers(deleting)).not.toEqual(await answers(never));
  for (const id of doomed) expect(await adapters.records.delete(deleting, id)).toMatchObject({ id });
  expect(await answers(deleting)).toEqual(await answers(never));
  while (merge.next(250) > 0);
  expect(await answers(deleting)).toEqual(await answers(never));
  expect(adapters.db.prepare('SELECT docs FROM search_tenants WHERE tenant = ?').pluck().get(deleting)).toBe(600 - doomed.length);
});

test("a delete takes the record's classification job with it, in the same transaction", async () => {
  const tenant = (await adapters.keys.createTenant({ name: 't', limits: LIMITS })).tenant_id;
  const kept = newRecord(tenant, { agent_id: 'a', type: 'fact', title: 'kept', body: 'b' }, new Date());
  const gone = newRecord(tenant, { agent_id: 'a', type: 'fact', title: 'gone', body: 'b' }, new Date());
  for (const r of [kept, gone]) await adapters.records.create(tenant, r, { recordQuota: 10, month: '2026-11' });
  await adapters.records.delete(tenant, gone.id);
  expect((await adapters.jobs.claim(10, 60_000)).map((j) => j.record_id)).toEqual([kept.id]);
});
