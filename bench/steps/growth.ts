import type { BenchQuery } from '../corpus.js';
import { progress } from '../support/progress.js';
import { median, timedPool } from '../support/stats.js';

/** One side of the growth: a corpus' biggest tenant, and the engine that answers searches in it. */
export interface GrowthSide {
  records: number;
  search: (query: BenchQuery) => unknown;
}

/** The growth of the engine's searches from a smaller corpus to a bigger one, both timed in one run. */
export interface GrowthRun {
  /** Each side's records, and the p50 of its searches over every round. */
  small: { records: number; p50Ms: number };
  big: { records: number; p50Ms: number };
  /** Each round's p50 of the bigger side over the smaller's, in the order the rounds ran. */
  ratios: number[];
  /**
   * How many searches each side ran a round: the same searches on both (absent in runs made before then,
   * when each side ran its own corpus' workload, whose mix of searches differed from the other's).
   */
  searches?: number;
}

/**
 * Times the same searches on both sides, one at a time, alternately round by round (the side that goes
 * first changes each round), after an untimed pass of each: on a machine whose speed moves by two or three
 * times from one hour to the next, the two p50s of one round ran minutes apart at most, where those of two
 * runs could be a day apart. Both sides run `queries`, so that the ratio is the growth of the same
 * searches, not also the difference between two draws of them: each corpus' own workload draws its
 * searches from its own commonest words, and on 2026-11-28 the two draws of the benchmark, each on its own
 * side, gave 3.15× where either draw on both sides gave 4.14× and 4.56×. The growth is the median of the
 * rounds' ratios (report.ts).
 */
export async function pairedGrowth(label: string, queries: readonly BenchQuery[], small: GrowthSide, big: GrowthSide, rounds: number): Promise<GrowthRun> {
  const time = async (side: GrowthSide) => (await timedPool(queries, 1, async (query) => void (await side.search(query)))).latencies;
  await time(small);
  await time(big);
  const bar = progress(label, rounds);
  const all = { small: [] as number[], big: [] as number[] };
  const ratios: number[] = [];
  const sides = { small, big };
  for (let round = 0; round < rounds; round++) {
    const times = { small: [] as number[], big: [] as number[] };
    for (const side of round % 2 === 0 ? (['small', 'big'] as const) : (['big', 'small'] as const)) times[side] = await time(sides[side]);
    all.small.push(...times.small);
    all.big.push(...times.big);
    ratios.push(median(times.big) / median(times.small));
    bar.tick();
  }
  const run = { small: { records: small.records, p50Ms: median(all.small) }, big: { records: big.records, p50Ms: median(all.big) }, ratios, searches: queries.length };
  bar.finish(`${run.small.p50Ms.toFixed(2)} → ${run.big.p50Ms.toFixed(2)} ms, the rounds' ratios ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×`);
  return run;
}
