import { expect, test } from '@jest/globals';
import type { BenchQuery } from '../../bench/corpus.js';
import { pairedGrowth } from '../../bench/steps/growth.js';

const queries: BenchQuery[] = Array.from({ length: 3 }, (_, i) => ({ kind: 'common-words', tenant: 'biggest', query: { q: `q${i}` } }));

test('the growth times the same searches on both sides after an untimed pass of each, alternately round by round, each side first in turn', async () => {
  const calls: string[] = [];
  const side = (name: string, records: number) => ({ records, search: (q: BenchQuery) => void calls.push(`${name} ${q.query.q}`) });
  const run = await pairedGrowth('growth', queries, side('small', 100), side('big', 1000), 3);
  const passes = (...sides: string[]) => sides.flatMap((s) => [`${s} q0`, `${s} q1`, `${s} q2`]);
  // The untimed passes, then rounds 1 to 3: small first, then big first, then small first.
  expect(calls).toEqual(passes('small', 'big', 'small', 'big', 'big', 'small', 'small', 'big'));
  // One ratio a round (their values are timings, which this test leaves alone).
  expect(run.ratios).toHaveLength(3);
  expect(run).toMatchObject({ small: { records: 100 }, big: { records: 1000 }, searches: 3 });
});
