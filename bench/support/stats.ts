/** The value at the p-th percentile (0–100) of ascending values, by the nearest-rank method. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

/** The median of unsorted values. */
export function median(values: readonly number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

/** Latency percentiles of a set of timed operations, and their throughput over the wall time they took. */
export interface LatencyStats {
  count: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  perSecond: number;
}

/** Summarizes latencies (ms) of operations that ran in `wallMs` of wall time. */
export function latencyStats(latenciesMs: readonly number[], wallMs: number): LatencyStats {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return {
    count: sorted.length,
    p50Ms: round(percentile(sorted, 50)),
    p95Ms: round(percentile(sorted, 95)),
    p99Ms: round(percentile(sorted, 99)),
    perSecond: Math.round((sorted.length / wallMs) * 1000),
  };
}

/**
 * Runs `task` for every item with at most `concurrency` in flight, timing each; returns the latencies in ms
 * (in item order) and the wall time.
 */
export async function timedPool<T>(items: readonly T[], concurrency: number, task: (item: T) => Promise<void>, onDone?: () => void) {
  const latencies = new Array<number>(items.length);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        const t = performance.now();
        await task(items[i]!);
        latencies[i] = performance.now() - t;
        onDone?.();
      }
    }),
  );
  return { latencies, wallMs: performance.now() - started };
}
