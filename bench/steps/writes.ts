import { generateCorpus, type CorpusOptions } from '../corpus.js';
import type { BenchHttp } from '../support/http.js';
import { progress } from '../support/progress.js';
import { latencyStats, type LatencyStats } from '../support/stats.js';
import type { BenchTenant } from '../support/tenants.js';

export interface WritePhase extends LatencyStats {
  concurrency: number;
  /** The most records that waited for the search index's merge, sampled every 250 ms during the phase (null unsampled). */
  maxMergeBacklog?: number | null;
  /**
   * The most that waited in each quarter of the phase's time, in order. Over a phase of many merges (each
   * waits for 4 096 records or a second, search-merge-policy.ts), level when the merge keeps up, rising
   * quarter after quarter when it falls behind. Absent unsampled, and in runs from before it was kept.
   */
  mergeBacklogByQuarter?: number[];
}

export interface WriteResult {
  phases: WritePhase[];
  /** The `created_at` the service gave each record, in corpus order (the peer stores the same instants). */
  createdAt: string[];
  /** An instant from the middle of the load, for the selective `since` searches. */
  midpoint: string;
  /** How many records each tenant got. */
  perTenant: Record<string, number>;
}

/**
 * Loads the corpus through `POST /api/v1/record`, in phases of rising concurrency (1, 8, then 32 for the
 * rest), and times every write. Each answer is a 201 only once the record is durable, so the rate is the
 * rate of durable writes. With `mergeBacklog` (the records above the merge mark, read on the server's
 * file), each phase also reports the most that waited for the merge, sampled every 250 ms, over the phase
 * and in each quarter of it: over a phase of many merges, whether the merge kept up with the writes
 * (level) or fell behind (rising).
 */
export async function loadCorpus(client: BenchHttp, tenants: Map<string, BenchTenant>, options: CorpusOptions, mergeBacklog?: () => number): Promise<WriteResult> {
  const n = options.records;
  const plan = [
    { concurrency: 1, count: Math.min(1_000, Math.ceil(n * 0.02)) },
    { concurrency: 8, count: Math.ceil(n * 0.1) },
  ];
  plan.push({ concurrency: 32, count: n - plan[0]!.count - plan[1]!.count });
  const corpus = generateCorpus(options);
  const createdAt: string[] = [];
  const phases: WritePhase[] = [];
  let midpoint = '';
  const perTenant: Record<string, number> = {};
  for (const { concurrency, count } of plan) {
    // Records are generated as the writers ask for them: building a phase's batch up front would hold it all
    // in memory and block the event loop for seconds, long enough for the server to close idle sockets.
    const bar = progress(`writes at concurrency ${concurrency}`, count);
    const latencies: number[] = [];
    let taken = 0;
    const started = performance.now();
    const backlog = mergeBacklog ? sampleBacklog(mergeBacklog) : null;
    // Stopped however the phase ends, so that a failed write leaves no timer reading the server's file.
    let waited: Pick<WritePhase, 'maxMergeBacklog' | 'mergeBacklogByQuarter'>;
    try {
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (taken < count) {
            taken++;
            const at = createdAt.length;
            createdAt.push('');
            const item = corpus.next().value!;
            perTenant[item.tenant] = (perTenant[item.tenant] ?? 0) + 1;
            const t = performance.now();
            const res = await client.send('POST', '/api/v1/record', tenants.get(item.tenant)!.api_key, item.record);
            latencies.push(performance.now() - t);
            if (res.status !== 201) throw new Error(`a write answered ${res.status} ${res.text}`);
            createdAt[at] = (JSON.parse(res.text) as { created_at: string }).created_at;
            if (at === Math.floor(n / 2)) midpoint = createdAt[at]!;
            bar.tick();
          }
        }),
      );
    } finally {
      waited = backlog ? backlog.stop() : { maxMergeBacklog: null };
    }
    const stats: WritePhase = { concurrency, ...latencyStats(latencies, performance.now() - started), ...waited };
    phases.push(stats);
    const kept = stats.mergeBacklogByQuarter ? `, merge backlog at most ${stats.maxMergeBacklog} records (by quarter: ${stats.mergeBacklogByQuarter.join(', ')})` : '';
    bar.finish(`${stats.perSecond} writes/s, p50 ${stats.p50Ms} ms, p99 ${stats.p99Ms} ms${kept}`);
  }
  return { phases, createdAt, midpoint: midpoint || createdAt[Math.floor(createdAt.length / 2)]!, perTenant };
}

/**
 * Reads `read` (how many records wait for the merge) every 250 ms from now until `stop`, which gives the most
 * it read over that time and in each quarter of it (backlogOf); `last` is the newest reading, 0 before one.
 */
export function sampleBacklog(read: () => number): { last(): number; stop(): ReturnType<typeof backlogOf> } {
  const samples: { at: number; backlog: number }[] = [];
  const started = performance.now();
  const timer = setInterval(() => samples.push({ at: performance.now() - started, backlog: read() }), 250);
  return {
    last: () => samples.at(-1)?.backlog ?? 0,
    stop: () => {
      clearInterval(timer);
      return backlogOf(samples, performance.now() - started);
    },
  };
}

/** The most of the samples, over the phase and in each quarter of its `wallMs` (0 where a quarter has none). */
export function backlogOf(samples: readonly { at: number; backlog: number }[], wallMs: number): { maxMergeBacklog: number; mergeBacklogByQuarter: number[] } {
  const byQuarter = [0, 0, 0, 0];
  for (const { at, backlog } of samples) {
    const q = Math.min(3, Math.floor((4 * at) / wallMs));
    byQuarter[q] = Math.max(byQuarter[q]!, backlog);
  }
  return { maxMergeBacklog: Math.max(...byQuarter), mergeBacklogByQuarter: byQuarter };
}
