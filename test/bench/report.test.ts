import { describe, expect, test } from '@jest/globals';
import { evaluateGoals, markdownReport, type BenchResults } from '../../bench/report.js';
import type { SearchRun } from '../../bench/steps/searches.js';

const stats = (p50Ms: number, p99Ms = p50Ms * 3) => ({ count: 100, p50Ms, p95Ms: p99Ms, p99Ms, perSecond: 1000 });
const run = (concurrency: number, p50: number, p99?: number): SearchRun => ({ concurrency, all: stats(p50, p99), byKind: { 'one-word': stats(p50, p99) } });

function results(overrides: Partial<BenchResults> = {}): BenchResults {
  return {
    date: '2026-11-22T02:00:00.000Z',
    mode: 'full',
    machine: { cpus: 2, cpuModel: 'test', memoryGiB: 24, node: 'v20' },
    corpus: { records: 100_000, seed: 1, tenants: [], queriesPerKind: 10, rounds: 1 },
    writes: [{ concurrency: 32, ...stats(5), perSecond: 3200 }],
    searches: { http: [run(1, 1.2), run(8, 1.9, 9), run(32, 4)], engine: run(1, 1) },
    peer: { name: 'PostgreSQL 15', searches: [run(1, 3), run(8, 4), run(32, 9)], quality: [] },
    quality: [{ set: 'cranfield', queries: 225, ndcg10: 0.42, map: 0.3, recall100: 0.7, noAnswer: { queries: 0, returnedSomething: 0 } }],
    coldStarts: [],
    goals: [],
    ...overrides,
  };
}

describe('the benchmark goals', () => {
  test('are met when every figure is inside its bound', () => {
    expect(evaluateGoals(results()).map((g) => g.met)).toEqual([true, null, true, true, true, true]);
  });

  test('each goal is missed on its own figure', () => {
    const missed = evaluateGoals(
      results({
        writes: [{ concurrency: 32, ...stats(5), perSecond: 2999 }],
        searches: { http: [run(1, 1.6), run(8, 2.1, 9), run(32, 4)], engine: run(1, 1) },
        quality: [{ set: 'cranfield', queries: 225, ndcg10: 0.409, map: 0.3, recall100: 0.7, noAnswer: { queries: 0, returnedSomething: 0 } }],
      }),
    );
    expect(missed.map((g) => g.met)).toEqual([false, null, false, false, false, false]);
  });

  test('goals a run cannot measure say so instead of passing or failing', () => {
    const goals = evaluateGoals(results({ corpus: { records: 5_000, seed: 1, tenants: [], queriesPerKind: 10, rounds: 1 }, peer: null }));
    expect(goals.filter((g) => g.met === null).map((g) => g.measured)).toEqual([
      'not measured: this run has 5000 records',
      'not measured: this run has 5000 records',
      'not measured: run with --peers',
    ]);
  });

  test('the report states a missed goal plainly', () => {
    const r = results({ writes: [{ concurrency: 32, ...stats(5), perSecond: 1000 }] });
    r.goals = evaluateGoals(r);
    expect(markdownReport(r)).toContain('| At least 3 000 durable writes per second | 1000 writes/s (best concurrency) | **no** |');
  });
});
