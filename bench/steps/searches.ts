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
 * Runs the workload `rounds` times through `search` with `concurrency` searches in flight, one kind of search
 * after another, so that each kind's throughput is measured on its own; one untimed pass first warms the
 * caches. Every search must succeed.
 */
export async function runSearches(
  label: string,
  workload: readonly BenchQuery[],
  concurrency: number,
  rounds: number,
  search: (query: BenchQuery) => Promise<unknown>,
): Promise<SearchRun> {
  await timedPool(workload, concurrency, async (q) => void (await search(q)));
  const bar = progress(`${label} at concurrency ${concurrency}`, workload.length * rounds);
  const byKind: SearchRun['byKind'] = {};
  const latencies: number[] = [];
  let wallMs = 0;
  for (const kind of QUERY_KINDS) {
    const items = Array.from({ length: rounds }, () => workload.filter((q) => q.kind === kind)).flat();
    if (items.length === 0) continue;
    const run = await timedPool(items, concurrency, async (q) => void (await search(q)), () => bar.tick());
    byKind[kind] = latencyStats(run.latencies, run.wallMs);
    latencies.push(...run.latencies);
    wallMs += run.wallMs;
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
