import { QUERY_KINDS, type BenchQuery, type QueryKind } from '../corpus.js';
import { progress } from '../support/progress.js';
import { latencyStats, timedPool, type LatencyStats } from '../support/stats.js';

/** The latencies of one engine's searches at one concurrency: all kinds together, and each kind. */
export interface SearchRun {
  concurrency: number;
  all: LatencyStats;
  byKind: Partial<Record<QueryKind, LatencyStats>>;
}

/**
 * Runs the workload `rounds` times through `search` with `concurrency` searches in flight, timing each,
 * after one untimed round to warm caches up. Every search must succeed.
 */
export async function runSearches(
  label: string,
  workload: readonly BenchQuery[],
  concurrency: number,
  rounds: number,
  search: (query: BenchQuery) => Promise<unknown>,
): Promise<SearchRun> {
  await timedPool(workload, concurrency, async (q) => void (await search(q)));
  const items = Array.from({ length: rounds }, () => workload).flat();
  const bar = progress(`${label} at concurrency ${concurrency}`, items.length);
  const { latencies, wallMs } = await timedPool(items, concurrency, async (q) => void (await search(q)), () => bar.tick());
  const byKind: SearchRun['byKind'] = {};
  for (const kind of QUERY_KINDS) {
    const own = latencies.filter((_, i) => items[i]!.kind === kind);
    // A kind's throughput is not measured apart (the kinds ran mixed), so its share of the wall time is pro rata.
    if (own.length > 0) byKind[kind] = latencyStats(own, (wallMs * own.length) / items.length);
  }
  const all = latencyStats(latencies, wallMs);
  bar.finish(`p50 ${all.p50Ms} ms, p99 ${all.p99Ms} ms, ${all.perSecond} searches/s`);
  return { concurrency, all, byKind };
}

/** The query string of a search, as an agent would send it. */
export function queryString(query: BenchQuery['query']): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== null) params.set(name, String(value));
  return params.toString();
}
