import { afterEach, beforeEach, describe, expect, jest, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteAdapters, type SqliteAdapters } from '../../shared/adapters/local/index.js';
import { SearchMerge } from '../../shared/adapters/local/search-merge.js';
import { MergeScheduler, type MergePolicy } from '../../shared/adapters/local/search-merge-policy.js';
import { newRecord } from '../../shared/domain/record.js';

/**
 * The merge policy (search-merge-policy.ts), as both mergers apply it: a batch once `minDocs` records wait
 * or the first has waited `maxDelayMs`; nothing when nothing waits; and never a look at once after a look
 * that took nothing in, which would spin.
 */

const POLICY: MergePolicy = { minDocs: 5, maxDelayMs: 1000, maxDocs: 100 };
const IDLE_MS = 777;

let dir: string;
let sqlite: SqliteAdapters;
let merge: SearchMerge;
let scheduler: MergeScheduler;
let tenant: string;

beforeEach(async () => {
  jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask', 'setTimeout', 'clearTimeout'], now: 1_000_000 });
  dir = mkdtempSync(join(tmpdir(), 'memory-merge-policy-'));
  sqlite = openSqliteAdapters(join(dir, 'memory.db'), { merger: () => ({ wake: () => undefined, close: async () => undefined }) });
  tenant = (await sqlite.keys.createTenant({ name: 't', limits: { recordQuota: 1e9, queryQuota: 1e9, rate: 1e6, burst: 1e6 } })).tenant_id;
  merge = new SearchMerge(sqlite.db);
  scheduler = new MergeScheduler(merge, POLICY, { idleMs: IDLE_MS });
});
afterEach(() => {
  jest.useRealTimers();
  sqlite.close();
  rmSync(dir, { recursive: true, force: true });
});

async function write(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const record = newRecord(tenant, { agent_id: 'a', type: 'fact', title: `note ${i}`, body: 'a record to merge' }, new Date());
    await sqlite.records.create(tenant, record, { recordQuota: 1e9, month: '2026-11' });
    ids.push(record.id);
  }
  return ids;
}

describe('the merge policy', () => {
  test('nothing waiting: no merge, and the idle wait', () => {
    expect(scheduler.look()).toEqual({ nextMs: IDLE_MS, merged: null });
  });

  test('fewer than minDocs wait the rest of maxDelayMs, then merge', async () => {
    await write(3);
    expect(scheduler.look()).toEqual({ nextMs: 1000, merged: null });
    jest.advanceTimersByTime(400);
    expect(scheduler.look()).toEqual({ nextMs: 600, merged: null });
    expect(merge.pending()).toBe(3);
    jest.advanceTimersByTime(600);
    expect(scheduler.look()).toEqual({ nextMs: 0, merged: { docs: 3, pending: 3 } });
    expect(merge.pending()).toBe(0);
    expect(scheduler.look()).toEqual({ nextMs: IDLE_MS, merged: null });
  });

  test('minDocs waiting merge at once', async () => {
    await write(5);
    expect(scheduler.look()).toEqual({ nextMs: 0, merged: { docs: 5, pending: 5 } });
    expect(merge.pending()).toBe(0);
  });

  test('records deleted above the mark count until a merge, which finds nothing and waits as when nothing waits', async () => {
    const ids = await write(6);
    for (const id of ids) await sqlite.records.delete(tenant, id);
    expect(merge.pending()).toBe(0);
    expect(merge.waitingAtMost()).toBe(6);
    // Six seqs above the mark: a merge is due, finds no record, and the next look is not at once.
    expect(scheduler.look()).toEqual({ nextMs: IDLE_MS, merged: null });
    // A new record is merged as ever, the deleted seqs with it.
    await write(1);
    expect(scheduler.look()).toEqual({ nextMs: 0, merged: { docs: 1, pending: 7 } });
    expect(merge.pending()).toBe(0);
    expect(merge.waitingAtMost()).toBe(0);
  });
});
