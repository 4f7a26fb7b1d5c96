/**
 * The tenants benchmark's measures of the server on a built directory: its starts, its memory, searches
 * over HTTP in random small tenants, and the same searches on the engine in this process.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { openReadOnlyDatabase } from '../shared/adapters/local/database.js';
import { SqliteSearchIndex } from '../shared/adapters/local/search-index.js';
import { parseQuery } from '../shared/domain/query-parse.js';
import { BenchHttp } from './support/http.js';
import { note, progress } from './support/progress.js';
import { latencyStats, median, timedPool, type LatencyStats } from './support/stats.js';
import { drawDistinct, drawMany, queryFrom, seededRandom } from './support/tenant-queries.js';
import type { Built, Tenant } from './tenants-build.js';
import { memoryOf, startServer } from './tenants-server.js';

/** Searches that found nothing (words of a tenant's own titles should always find something). */
let emptyAnswers = 0;

async function search(client: BenchHttp, tenant: Tenant, q: string): Promise<void> {
  const res = await client.send('GET', `/api/v1/query?${new URLSearchParams({ q })}`, tenant.key);
  if (res.status !== 200) throw new Error(`a search answered ${res.status} ${res.text}`);
  if ((JSON.parse(res.text) as unknown[]).length === 0 && emptyAnswers++ < 5) note(`a search of words from the tenant's own titles found nothing: ${q}`);
}

/** A search in `tenant` with words from one of its titles. */
function queryIn(tenant: Tenant, rng: () => number): { tenant: Tenant; q: string } {
  for (;;) {
    const q = queryFrom(tenant.titles[Math.floor(rng() * tenant.titles.length)]!, rng);
    if (q !== null) return { tenant, q };
  }
}

/** What the benchmark reports of one build. */
export interface Measured {
  label: string;
  tenants: number;
  records: number;
  dbMiB: number;
  loadSeconds: number;
  /** Each start: spawn to "listening", and spawn to a first search answered. */
  starts: Start[];
  listenMs: number;
  readyMs: number;
  memory: { afterStart: number; afterTenantSweep: number; afterSearches: number; peak: number; sweptTenants: number };
  http: LatencyStats;
  engineUs: LatencyStats;
  startSteps: Record<string, number>;
}

/**
 * One start of the server on `built`, timed to its first answered search; the server is left running. A
 * first search that answers 503 (a search thread not up within the search deadline) is retried, and counted.
 */
async function timedStart(built: Built, probe: { tenant: Tenant; q: string }) {
  const t0 = performance.now();
  const server = await startServer(built.dir);
  const client = new BenchHttp(server.url, 1);
  let refused = 0;
  try {
    for (;;) {
      const res = await client.send('GET', `/api/v1/query?${new URLSearchParams({ q: probe.q })}`, probe.tenant.key);
      if (res.status === 200) break;
      if (res.status !== 503) throw new Error(`the first search answered ${res.status} ${res.text}`);
      refused++;
      note(`${built.label}: the first search after start answered 503: ${res.text}`);
    }
  } catch (error) {
    client.close();
    await server.stop();
    throw error;
  }
  return { server, client, listenMs: server.listenMs, readyMs: performance.now() - t0, refused };
}

/** One start of the server: to "listening", to a first search answered, and the 503s before it. */
export type Start = { listenMs: number; readyMs: number; refused: number };

/** `starts` timed starts of each build, interleaved (one of each, then again) so that a busy moment of the shared machine falls on all; one untimed start of each first. */
export async function measureStarts(builds: Built[], { starts, seed }: { starts: number; seed: number }): Promise<Start[][]> {
  const out: Start[][] = builds.map(() => []);
  for (let round = 0; round <= starts; round++) {
    for (const [i, built] of builds.entries()) {
      const s = await timedStart(built, queryIn(built.tenants.find((t) => !t.big)!, seededRandom(seed)));
      s.client.close();
      await s.server.stop();
      if (round > 0) out[i]!.push({ listenMs: s.listenMs, readyMs: s.readyMs, refused: s.refused });
      note(`${built.label}: start ${round === 0 ? '(untimed)' : round}: ${s.listenMs.toFixed(0)} ms to listen, ${s.readyMs.toFixed(0)} ms to a first search${s.refused ? `, after ${s.refused} refusals` : ''}`);
    }
  }
  return out;
}

/**
 * Memory and searches on one more start of the server on `built`: its memory after start, after one search
 * in each of `memoryTenants` tenants and after `searches` more; those searches over HTTP, then on the engine
 * in this process; and the database's size.
 */
export async function measure(
  built: Built,
  starts: Start[],
  rng: () => number,
  { memoryTenants, searches }: { memoryTenants: number; searches: number },
): Promise<Omit<Measured, 'startSteps'>> {
  const small = built.tenants.filter((t) => !t.big);
  const probe = queryIn(small[0]!, rng);
  const label = `${built.label}`;

  // 2–3. Memory and searches on one more start.
  const { server, client } = await timedStart(built, probe);
  try {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const afterStart = memoryOf(server.child).rss;
    const swept = drawDistinct(small, memoryTenants, rng).map((t) => queryIn(t, rng));
    const sweepBar = progress(`${label}: one search in each of ${swept.length} tenants`, swept.length);
    await timedPool(swept, 1, ({ tenant, q }) => search(client, tenant, q), () => sweepBar.tick());
    sweepBar.finish();
    const afterTenantSweep = memoryOf(server.child).rss;

    const workload = drawMany(small, searches, rng).map((t) => queryIn(t, rng));
    const bar = progress(`${label}: ${searches} searches over HTTP at concurrency 1`, searches);
    const run = await timedPool(workload, 1, ({ tenant, q }) => search(client, tenant, q), () => bar.tick());
    const http = latencyStats(run.latencies, run.wallMs);
    bar.finish(`p50 ${http.p50Ms} ms, p99 ${http.p99Ms} ms`);
    const { rss: afterSearches, peak } = memoryOf(server.child);
    client.close();
    await server.stop();

    // The engine alone, in this process, on a read-only connection as a search thread has: a warm-up pass,
    // then the timed one (figures in µs).
    const db = openReadOnlyDatabase(join(built.dir, 'memory.db'));
    const index = new SqliteSearchIndex(db);
    const once = ({ tenant, q }: { tenant: Tenant; q: string }) => index.searchRows(tenant.id, { text: parseQuery(q), limit: 20 });
    for (const item of workload) once(item);
    const micros: number[] = [];
    const t0 = performance.now();
    for (const item of workload) {
      const t = performance.now();
      once(item);
      micros.push((performance.now() - t) * 1000);
    }
    const engineUs = latencyStats(micros, performance.now() - t0);
    db.close();
    note(`${label}: engine in process p50 ${engineUs.p50Ms} µs, p99 ${engineUs.p99Ms} µs`);

    const bytes = ['', '-wal'].reduce((sum, suffix) => {
      try {
        return sum + statSync(join(built.dir, `memory.db${suffix}`)).size;
      } catch {
        return sum;
      }
    }, 0);
    return {
      label,
      tenants: built.tenants.length,
      records: built.records,
      dbMiB: bytes / 2 ** 20,
      loadSeconds: built.loadSeconds,
      starts,
      listenMs: median(starts.map((s) => s.listenMs)),
      readyMs: median(starts.map((s) => s.readyMs)),
      memory: { afterStart, afterTenantSweep, afterSearches, peak, sweptTenants: swept.length },
      http,
      engineUs,
    };
  } catch (error) {
    client.close();
    await server.stop();
    throw error;
  }
}

/** How many searches over HTTP found nothing, so far. */
export const emptyAnswerCount = (): number => emptyAnswers;
