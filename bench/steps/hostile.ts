import { LIMITS } from '../../shared/domain/record.js';
import { generateCorpus, mulberry32 } from '../corpus.js';
import { BenchHttp } from '../support/http.js';
import { progress } from '../support/progress.js';
import { startBenchServer } from '../support/server.js';
import { latencyStats, percentile, type LatencyStats } from '../support/stats.js';
import { createTenant, type BenchTenant } from '../support/tenants.js';

/** What the other tenants' requests took, by operation. */
export type Operations = Record<'get' | 'search' | 'write', LatencyStats>;

/** The searches meant to stall the server, and what the other tenants saw meanwhile (bench/results, docs/benchmarks.md). */
export interface HostileRun {
  /** Clients that send such searches, each one at a time, all the time. */
  clients: number;
  seconds: number;
  /** The hostile tenant's records: 64 KB bodies of one word repeated. */
  records: number;
  deadlineMs: number;
  /** The other tenants' requests with no hostile search running, then beside them, in the same run. */
  calm: Operations;
  underLoad: Operations;
  /** The hostile searches: how many, how each ended, how long they took; `late` ended after deadline plus a 10 % grace. */
  hostile: { count: number; statuses: Record<string, number>; p50Ms: number; p99Ms: number; maxMs: number; late: number };
}

/** A 64 KB body (65 535 bytes): one word, 32 768 times. */
const ONE_WORD_BODY = 'x '.repeat(32_767) + 'x';
/** A quoted phrase of 1 000 words, all the same. */
const LONG_PHRASE = `"${Array(1000).fill('x').join(' ')}"`;
/** A query of 5 000 one-letter words, within the URL's 10 240 characters. */
const LONG_QUERY = Array.from({ length: 5000 }, (_, i) => 'xyzbcdfghjklmnpqrstvw'[i % 21]).join(' ');

/**
 * A server of its own, with a hostile tenant whose records are 64 KB of one word, and two ordinary tenants.
 * First the ordinary tenants' gets, searches and writes run alone for `seconds`, then as long again while
 * `clients` clients send the hostile tenant's worst searches (a 1 000-word phrase of that word, a 5 000-word
 * query), one after another without pause. Each hostile search must end within its deadline (the server's
 * search timeout, 5 s) with 200 or 503; the other tenants' latencies are compared across the two phases.
 */
export async function runHostileSearches({ seconds, clients = 4, records = 24 }: { seconds: number; clients?: number; records?: number }): Promise<HostileRun> {
  const server = await startBenchServer();
  const http = new BenchHttp(server.url);
  try {
    const hostile = await createTenant(server.dataDir, 'hostile');
    const others = [await createTenant(server.dataDir, 'ordinary-a'), await createTenant(server.dataDir, 'ordinary-b')];
    const setup = progress('stalling searches: writing the hostile tenant and two ordinary ones', records + 4000);
    for (let i = 0; i < records; i++) {
      await write(http, hostile, { agent_id: 'hostile', type: 'fact', title: 'x', body: ONE_WORD_BODY });
      setup.tick();
    }
    // Ordinary records from the benchmark's generator, half to each ordinary tenant; their ids and title
    // words make the gets and searches.
    const ids: string[][] = [[], []];
    const titles: string[] = [];
    let n = 0;
    for (const { record } of generateCorpus({ records: 4000, seed: 7 })) {
      const t = n++ % 2;
      ids[t]!.push(await write(http, others[t]!, record));
      titles.push(record.title);
      setup.tick();
    }
    setup.finish();
    const rng = mulberry32(11);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rng() * xs.length)]!;
    const searchOf = () => {
      const words = pick(titles).split(/\s+/).filter((w) => w.length > 3);
      return rng() < 0.3 ? `what did we decide about ${pick(words)}?` : words.slice(0, 1 + Math.floor(rng() * 3)).join(' ');
    };
    const ordinary = async (stop: () => boolean): Promise<Operations> => {
      const latencies = { get: [] as number[], search: [] as number[], write: [] as number[] };
      const started = performance.now();
      const loop = async (op: keyof typeof latencies, send: (t: number) => Promise<void>) => {
        for (let i = 0; !stop(); i++) {
          const t0 = performance.now();
          await send(i % 2);
          latencies[op].push(performance.now() - t0);
        }
      };
      await Promise.all([
        loop('get', async (t) => expectStatus(await http.send('GET', `/api/v1/record/${pick(ids[t]!)}`, others[t]!.api_key), 200)),
        loop('search', async (t) => expectStatus(await http.send('GET', `/api/v1/query?q=${encodeURIComponent(searchOf())}`, others[t]!.api_key), 200)),
        loop('write', async (t) => void (await write(http, others[t]!, { agent_id: 'ordinary', type: 'fact', title: `A note ${rng()}`, body: searchOf() }))),
      ]);
      const wall = performance.now() - started;
      return { get: latencyStats(latencies.get, wall), search: latencyStats(latencies.search, wall), write: latencyStats(latencies.write, wall) };
    };
    const phase = (label: string) => {
      const bar = progress(label, seconds);
      const timer = setInterval(() => bar.tick(), 1000);
      const end = Date.now() + seconds * 1000;
      return { stop: () => Date.now() >= end, done: () => (clearInterval(timer), bar.finish()) };
    };
    const calmPhase = phase('stalling searches: the ordinary tenants alone');
    const calm = await ordinary(calmPhase.stop);
    calmPhase.done();

    const loadPhase = phase(`stalling searches: the ordinary tenants beside ${clients} clients of stalling searches`);
    const statuses: Record<string, number> = {};
    const durations: number[] = [];
    const attacker = async (c: number) => {
      for (let i = c; !loadPhase.stop(); i++) {
        const q = i % 2 === 0 ? LONG_PHRASE : LONG_QUERY;
        const t0 = performance.now();
        const res = await http.send('GET', `/api/v1/query?q=${encodeURIComponent(q).replace(/%20/g, '+')}`, hostile.api_key);
        durations.push(performance.now() - t0);
        const key = res.status === 503 ? `503 ${(JSON.parse(res.text) as { error: string }).error}` : String(res.status);
        statuses[key] = (statuses[key] ?? 0) + 1;
      }
    };
    const [underLoad] = await Promise.all([ordinary(loadPhase.stop), ...Array.from({ length: clients }, (_, c) => attacker(c))]);
    loadPhase.done();
    const sorted = [...durations].sort((a, b) => a - b);
    const deadlineMs = LIMITS.searchTimeoutMs;
    return {
      clients,
      seconds,
      records,
      deadlineMs,
      calm,
      underLoad: underLoad as Operations,
      hostile: {
        count: sorted.length,
        statuses,
        p50Ms: round(percentile(sorted, 50)),
        p99Ms: round(percentile(sorted, 99)),
        maxMs: round(sorted.at(-1) ?? 0),
        late: sorted.filter((ms) => ms > deadlineMs * 1.1).length,
      },
    };
  } finally {
    http.close();
    await server.stop();
  }
}

const round = (x: number) => Math.round(x * 10) / 10;

async function write(http: BenchHttp, tenant: BenchTenant, record: object): Promise<string> {
  const res = await http.send('POST', '/api/v1/record', tenant.api_key, record);
  expectStatus(res, 201);
  return (JSON.parse(res.text) as { id: string }).id;
}

function expectStatus(res: { status: number; text: string }, status: number): void {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status} ${res.text.slice(0, 200)}`);
}
