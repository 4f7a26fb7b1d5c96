import { describe, expect, test } from '@jest/globals';
import { averagePrecision, ndcgAt, recallAt, summarize } from '../../bench/quality/metrics.js';

const judged = (entries: [string, number][]) => new Map(entries);

describe('ranking quality measures', () => {
  test('nDCG@k: 1 for the ideal order, the textbook value otherwise, 0 without relevant documents', () => {
    const j = judged([['a', 3], ['b', 2], ['c', 1]]);
    expect(ndcgAt(10, ['a', 'b', 'c'], j)).toBeCloseTo(1);
    // DCG of [c, x, a] = 1/log2(2) + 0 + 3/log2(4) = 2.5; ideal = 3 + 2/log2(3) + 1/2 = 4.7619
    expect(ndcgAt(10, ['c', 'x', 'a'], j)).toBeCloseTo(2.5 / (3 + 2 / Math.log2(3) + 0.5), 6);
    expect(ndcgAt(1, ['b', 'a'], j)).toBeCloseTo(2 / 3);
    expect(ndcgAt(10, ['a'], judged([]))).toBe(0);
    expect(ndcgAt(10, ['a'], judged([['a', -1]]))).toBe(0); // a negative grade is not relevant
  });

  test('average precision counts relevant documents never returned as misses', () => {
    const j = judged([['a', 1], ['b', 1], ['c', 1], ['d', 1]]);
    // found at ranks 1 and 3: (1/1 + 2/3) / 4 relevant
    expect(averagePrecision(['a', 'x', 'b'], j)).toBeCloseTo((1 + 2 / 3) / 4);
    expect(averagePrecision([], j)).toBe(0);
  });

  test('recall@k looks only at the first k results', () => {
    const j = judged([['a', 1], ['b', 2]]);
    expect(recallAt(1, ['x', 'a', 'b'], j)).toBe(0);
    expect(recallAt(2, ['x', 'a', 'b'], j)).toBe(0.5);
    expect(recallAt(100, ['x', 'a', 'b'], j)).toBe(1);
  });

  test('summaries average over the queries that have something relevant', () => {
    const s = summarize([
      { ranking: ['a'], judgments: judged([['a', 1]]) },
      { ranking: ['x'], judgments: judged([['a', 1]]) },
      { ranking: ['a'], judgments: judged([]) },
    ]);
    expect(s).toEqual({ queries: 2, ndcg10: 0.5, map: 0.5, recall100: 0.5 });
  });
});
