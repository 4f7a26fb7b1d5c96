import { expect, test } from '@jest/globals';
import { tenantsFor } from '../../bench/corpus.js';
import { backlogOf, loadCorpus } from '../../bench/steps/writes.js';

const sampled = (backlogs: number[], everyMs: number) => backlogs.map((backlog, i) => ({ at: (i + 1) * everyMs, backlog }));

test('the backlog of a phase: its most, and the most in each quarter of its time, in order', () => {
  // 16 samples over 4 s: four a quarter; a merge that keeps up saws up and down, one that falls behind rises.
  expect(backlogOf(sampled([10, 40, 5, 30, 12, 44, 8, 20, 9, 41, 3, 2, 11, 39, 6, 1], 250), 4000)).toEqual({ maxMergeBacklog: 44, mergeBacklogByQuarter: [40, 44, 41, 39] });
  expect(backlogOf(sampled([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16], 250), 4000)).toEqual({ maxMergeBacklog: 16, mergeBacklogByQuarter: [3, 7, 11, 16] });
});

test('a sample at the very end counts in the last quarter, and a quarter without one holds 0', () => {
  expect(backlogOf([{ at: 1000, backlog: 7 }], 1000)).toEqual({ maxMergeBacklog: 7, mergeBacklogByQuarter: [0, 0, 0, 7] });
  expect(backlogOf([], 100)).toEqual({ maxMergeBacklog: 0, mergeBacklogByQuarter: [0, 0, 0, 0] });
});

test('a phase whose write fails stops reading the backlog before the error reaches the caller', async () => {
  let reads = 0;
  // Each write is answered late and refused, so the sampler runs before the phase fails.
  const client = { send: () => new Promise((done) => setTimeout(() => done({ status: 500, text: '{"error":"boom"}' }), 300)) };
  const options = { records: 100, seed: 1 };
  const tenants = new Map(tenantsFor(options).map((t) => [t.name, { name: t.name, tenant_id: t.name, api_key: t.name }]));
  await expect(loadCorpus(client as never, tenants as never, options, () => ++reads)).rejects.toThrow('a write answered 500');
  const after = reads;
  expect(after).toBeGreaterThan(0);
  await new Promise((done) => setTimeout(done, 600));
  expect(reads).toBe(after);
});
