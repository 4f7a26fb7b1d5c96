import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from '@jest/globals';
import { openSqliteAdapters, type SqliteAdapters } from '../../shared/adapters/local/index.js';
import { SqliteJobQueue } from '../../shared/adapters/local/job-queue.js';

let dir: string;
let adapters: SqliteAdapters;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memory-jobs-'));
  adapters = openSqliteAdapters(join(dir, 'memory.db'));
});
afterEach(() => {
  adapters.close();
  rmSync(dir, { recursive: true, force: true });
});

test('the backlog counts jobs waiting or leased, not done or dead ones', async () => {
  const { jobs } = adapters;
  await jobs.enqueue([1, 2, 3].map((n) => ({ tenant_id: 't', record_id: `r${n}` })));
  expect(jobs.backlog()).toBe(3);
  const [first, second] = await jobs.claim(2, 60_000);
  expect(jobs.backlog()).toBe(3); // leased jobs are not done yet
  await jobs.complete([first!.jobId]);
  expect(jobs.backlog()).toBe(2);
  await jobs.retry(second!.jobId, 'boom', 0, 1); // its one attempt is used up: dead
  expect(jobs.backlog()).toBe(1);
});

test("counts() gives the jobs by state, the metrics' classification queue: ready (waiting or leased) and dead", async () => {
  const { jobs } = adapters;
  expect(jobs.counts()).toEqual({ ready: 0, dead: 0 });
  await jobs.enqueue([1, 2, 3].map((n) => ({ tenant_id: 't', record_id: `r${n}` })));
  const [first, second] = await jobs.claim(2, 60_000);
  expect(jobs.counts()).toEqual({ ready: 3, dead: 0 });
  await jobs.complete([first!.jobId]);
  await jobs.retry(second!.jobId, 'boom', 0, 1);
  expect(jobs.counts()).toEqual({ ready: 1, dead: 1 });
  expect(jobs.counts().ready).toBe(jobs.backlog());
});

test('jobs are claimed in the order they became available, not in the order they were queued', async () => {
  let now = 1_000;
  const jobs = new SqliteJobQueue(adapters.db, () => now);
  await jobs.enqueue([{ tenant_id: 't', record_id: 'r1' }]);
  const [first] = await jobs.claim(1, 60_000);
  await jobs.retry(first!.jobId, 'boom', 5_000, 5); // available again at 6 000
  now = 2_000;
  await jobs.enqueue([{ tenant_id: 't', record_id: 'r2' }, { tenant_id: 't', record_id: 'r3' }]);
  now = 7_000;
  expect((await jobs.claim(2, 60_000)).map((j) => j.record_id)).toEqual(['r2', 'r3']);
  expect((await jobs.claim(2, 60_000)).map((j) => j.record_id)).toEqual(['r1']);
});
