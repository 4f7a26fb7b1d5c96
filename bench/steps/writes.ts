import { generateCorpus, type CorpusOptions } from '../corpus.js';
import type { BenchHttp } from '../support/http.js';
import { progress } from '../support/progress.js';
import { latencyStats, type LatencyStats } from '../support/stats.js';
import type { BenchTenant } from '../support/tenants.js';

export interface WritePhase extends LatencyStats {
  concurrency: number;
  /** The most records that waited for the search index's merge, sampled every 250 ms during the phase (null unsampled). */
  maxMergeBacklog?: number | null;
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
 * file), each phase also reports the most that waited for the merge, sampled every 250 ms: whether the
 * merge kept up with the writes.
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
    let maxMergeBacklog: number | null = mergeBacklog ? 0 : null;
    const sampler = mergeBacklog ? setInterval(() => (maxMergeBacklog = Math.max(maxMergeBacklog ?? 0, mergeBacklog())), 250) : null;
    const started = performance.now();
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
    if (sampler) clearInterval(sampler);
    const stats = { concurrency, ...latencyStats(latencies, performance.now() - started), maxMergeBacklog };
    phases.push(stats);
    bar.finish(`${stats.perSecond} writes/s, p50 ${stats.p50Ms} ms, p99 ${stats.p99Ms} ms${maxMergeBacklog === null ? '' : `, merge backlog at most ${maxMergeBacklog} records`}`);
  }
  return { phases, createdAt, midpoint: midpoint || createdAt[Math.floor(createdAt.length / 2)]!, perTenant };
}
