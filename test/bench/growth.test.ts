import { expect, test } from '@jest/globals';
import type { BenchQuery } from '../../bench/corpus.js';
import { pairedGrowth } from '../../bench/steps/growth.js';

const queries = (tenant: string, n: number): BenchQuery[] => Array.from({ length: n }, (_, i) => ({ kind: 'common-words', tenant, query: { q: `q${i}` } }));

test('the growth times both sides after an untimed pass of each, alternately round by round, each side first in turn', async () => {
  const calls: string[] = [];
  const side = (name: string, records: number, n: number) => ({ records, queries: queries(name, n), search: (q: BenchQuery) => void calls.push(`${q.tenant} ${q.query.q}`) });
  const run = await pairedGrowth('growth', side('small', 100, 2), side('big', 1000, 3), 3);
  const passes = (...sides: string[]) => sides.flatMap((s) => (s === 'small' ? ['small q0', 'small q1'] : ['big q0', 'big q1', 'big q2']));
  // The untimed passes, then rounds 1 to 3: small first, then big first, then small first.
  expect(calls).toEqual(passes('small', 'big', 'small', 'big', 'big', 'small', 'small', 'big'));
  // One ratio a round (their values are timings, which this test leaves alone).
  expect(run.ratios).toHaveLength(3);
  expect(run.small.records).toBe(100);
  expect(run.big.records).toBe(1000);
});
