import type { BenchQuery } from '../corpus.js';
import { progress } from '../support/progress.js';
import { median, timedPool } from '../support/stats.js';

/** One side of the growth: a corpus' biggest tenant, its searches, and the engine that answers them. */
export interface GrowthSide {
  records: number;
  queries: readonly BenchQuery[];
  search: (query: BenchQuery) => unknown;
}

/** The growth of the engine's searches from a smaller corpus to a bigger one, both timed in one run. */
export interface GrowthRun {
  /** Each side's records, and the p50 of its searches over every round. */
  small: { records: number; p50Ms: number };
  big: { records: number; p50Ms: number };
  /** Each round's p50 of the bigger side over the smaller's, in the order the rounds ran. */
  ratios: number[];
}

/**
 * Times both sides' searches one at a time, alternately round by round (the side that goes first changes
 * each round), after an untimed pass of each: on a machine whose speed moves by two or three times from one
 * hour to the next, the two p50s of one round ran minutes apart at most, where those of two runs could be
 * a day apart. The growth is the median of the rounds' ratios (report.ts).
 */
export async function pairedGrowth(label: string, small: GrowthSide, big: GrowthSide, rounds: number): Promise<GrowthRun> {
  const time = async (side: GrowthSide) => (await timedPool(side.queries, 1, async (query) => void (await side.search(query)))).latencies;
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
  const run = { small: { records: small.records, p50Ms: median(all.small) }, big: { records: big.records, p50Ms: median(all.big) }, ratios };
  bar.finish(`${run.small.p50Ms.toFixed(2)} → ${run.big.p50Ms.toFixed(2)} ms, the rounds' ratios ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×`);
  return run;
}
