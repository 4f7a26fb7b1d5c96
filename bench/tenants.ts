/**
 * `npm run bench:tenants`: many tenants in one SQLite database (issue 14). Builds a data directory with
 * `--tenants` tenants (one key each) of `--records-per-tenant` records, and two small ones to compare with
 * (one tenant; `--baseline-tenants` tenants of the same size), then measures on each:
 *   1. the start of the real server process (as bench/support/server.ts spawns it): until it prints that it
 *      listens, and until it answers a first authenticated search; the median of `--starts` starts;
 *   2. the server's resident memory after start, after one search in each of `--memory-tenants` different
 *      tenants, and after the timed searches;
 *   3. `--searches` searches over HTTP at concurrency 1, each in a random small tenant with 1–3 words of one
 *      of its records' titles; and the same searches on the engine in this process (SqliteSearchIndex);
 *   4. the database's size;
 * and, in this process, the steps of the server's start that read the database, to find any that grows
 * with the tenants. Options:
 *   --tenants N             default 10 000
 *   --records-per-tenant N  default 20
 *   --baseline-tenants N    default 5
 *   --filler                also a database of the baseline tenants plus one tenant holding as many records
 *                           as all the small tenants together: as big a file, few tenants
 *   --searches N            default 2000;  --memory-tenants N  default 1000;  --starts N  default 3
 *   --seed S                the corpus and the draws;  --keep  leave the data directories in place
 *   --classify              run the classification jobs through the real classifier worker (about 1 ms a
 *                           record here) instead of dropping them
 *
 * The records are loaded in this process through the service's own store (SqliteRecordStore.create, the
 * code a POST /api/v1/record runs, with its group commit), on a connection with `synchronous = OFF` since
 * only the load's speed depends on it; tenants and keys through local/tenants.ts as the admin CLI makes them;
 * then the classification jobs the writes queued are dropped (or, with --classify, run through the real
 * classifier worker), so that the server's job loop is idle while it is measured; without --classify the
 * records have no classification, which only makes the search answers a little shorter. Prints a markdown table and writes bench/results/tenants-<date>-<N>.json.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { createClassifierWorker } from '../functions/classifier/handler.js';
import { JobLoop } from '../local/job-loop.js';
import { createTenantWithKey } from '../local/tenants.js';
import { openReadOnlyDatabase } from '../shared/adapters/local/database.js';
import { openSqliteAdapters } from '../shared/adapters/local/index.js';
import type { InlineMerger } from '../shared/adapters/local/search-merger.js';
import { SqliteSearchIndex } from '../shared/adapters/local/search-index.js';
import { defaultClassifier } from '../shared/classifiers/default.js';
import { parseQuery } from '../shared/domain/query-parse.js';
import { quotaMonth } from '../shared/domain/quota-month.js';
import { newRecord } from '../shared/domain/record.js';
import { DEFAULT_SEED, generateCorpus } from './corpus.js';
import { BenchHttp } from './support/http.js';
import { note, progress } from './support/progress.js';
import { latencyStats, median, timedPool, type LatencyStats } from './support/stats.js';
import { drawDistinct, drawMany, queryFrom, residentMiB, seededRandom } from './support/tenant-queries.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const { values } = parseArgs({
  options: {
    tenants: { type: 'string', default: '10000' },
    'records-per-tenant': { type: 'string', default: '20' },
    'baseline-tenants': { type: 'string', default: '5' },
    filler: { type: 'boolean', default: false },
    searches: { type: 'string', default: '2000' },
    'memory-tenants': { type: 'string', default: '1000' },
    starts: { type: 'string', default: '3' },
    seed: { type: 'string' },
    keep: { type: 'boolean', default: false },
    classify: { type: 'boolean', default: false },
  },
});
const int = (name: keyof typeof values, min: number) => {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer of at least ${min}`);
  return n;
};
const TENANTS = int('tenants', 1);
const PER_TENANT = int('records-per-tenant', 1);
const BASELINE = int('baseline-tenants', 1);
const SEARCHES = int('searches', 10);
const MEMORY_TENANTS = int('memory-tenants', 1);
const STARTS = int('starts', 1);
const SEED = Number(values.seed ?? DEFAULT_SEED);
/** High enough never to shape the measurement (as bench/support/tenants.ts sets them). */
const LIMITS = { recordQuota: 1_000_000_000, queryQuota: 1_000_000_000, rate: 1_000_000, burst: 1_000_000 };

interface Tenant {
  id: string;
  key: string;
  /** Some of its records' titles, to draw queries from. */
  titles: string[];
  /** True for the one big tenant of the filler database, which the searches leave out. */
  big?: boolean;
}

interface Built {
  label: string;
  dir: string;
  tenants: Tenant[];
  records: number;
  loadSeconds: number;
  classifySeconds: number;
}

// ---------------------------------------------------------------------------------------------------------
// Building a data directory.

/**
 * A new data directory with `groups` of tenants: `count` tenants of `perTenant` records each. Records are
 * written round-robin over the tenants, as writes of many tenants arrive interleaved.
 */
async function build(label: string, groups: { count: number; perTenant: number; big?: boolean }[], seed: number): Promise<Built> {
  const dir = mkdtempSync(join(tmpdir(), 'memory-tenants-'));
  const adapters = openSqliteAdapters(join(dir, 'memory.db'));
  adapters.db.pragma('synchronous = OFF');
  const tenants: Tenant[] = [];
  const plan: { tenant: Tenant; records: number }[] = [];
  const total = groups.reduce((sum, g) => sum + g.count, 0);
  const tenantBar = progress(`${label}: tenants and keys`, total);
  let n = 0;
  for (const group of groups) {
    for (let i = 0; i < group.count; i += 1000) {
      // 1000 tenants a transaction: the same statements as the admin CLI's, fewer commits.
      adapters.db.exec('BEGIN');
      for (let j = i; j < Math.min(group.count, i + 1000); j++) {
        const issued = await createTenantWithKey(adapters.keys, `tenant-${String(n++).padStart(6, '0')}${group.big ? '-big' : ''}`, LIMITS);
        const tenant: Tenant = { id: issued.tenant_id, key: issued.api_key, titles: [], ...(group.big ? { big: true } : {}) };
        tenants.push(tenant);
        plan.push({ tenant, records: group.perTenant });
      }
      adapters.db.exec('COMMIT');
      tenantBar.tick(Math.min(1000, group.count - i));
    }
  }
  tenantBar.finish();

  // Round-robin: record k goes to the k-th tenant that still needs records, cycling.
  const records = plan.reduce((sum, p) => sum + p.records, 0);
  const order: Tenant[] = [];
  const left = plan.map((p) => p.records);
  for (let round = 0; order.length < records; round++) {
    for (let t = 0; t < plan.length; t++) if (left[t]! > 0) (left[t]!--, order.push(plan[t]!.tenant));
  }
  const month = quotaMonth(new Date());
  const corpus = generateCorpus({ records, seed });
  const bar = progress(`${label}: loading ${records} records through SqliteRecordStore.create`, records);
  const started = performance.now();
  const at = Date.now() - records;
  const CHUNK = 512;
  for (let i = 0; i < records; i += CHUNK) {
    const writes: Promise<unknown>[] = [];
    for (let k = i; k < Math.min(records, i + CHUNK); k++) {
      const tenant = order[k]!;
      const { record } = corpus.next().value!;
      if (tenant.titles.length < 5) tenant.titles.push(record.title);
      writes.push(adapters.records.create(tenant.id, newRecord(tenant.id, record, new Date(at + k)), { recordQuota: LIMITS.recordQuota, month }));
    }
    await Promise.all(writes);
    bar.tick(writes.length);
  }
  const loadSeconds = (performance.now() - started) / 1000;
  bar.finish(`${Math.round(records / loadSeconds)} records/s`);

  // The classification the server's job loop would otherwise do while it is being measured.
  const classifyStarted = performance.now();
  if (!values.classify) adapters.db.exec('DELETE FROM classification_jobs');
  const backlog = adapters.jobs.backlog();
  const classifyBar = progress(`${label}: classifying through the classifier worker`, backlog);
  const logger = new Logger({ serviceName: 'memory', logLevel: 'ERROR' });
  const loop = new JobLoop({
    jobs: adapters.jobs,
    worker: createClassifierWorker({ records: adapters.records, classifier: defaultClassifier, logger }),
    logger,
    pollMs: 1,
    batchSize: 500,
  });
  for (let last = backlog; last > 0; ) {
    await loop.pass();
    const now = adapters.jobs.backlog();
    classifyBar.tick(last - now);
    if (now === last) throw new Error(`classification made no progress (${now} jobs left)`);
    last = now;
  }
  const classifySeconds = (performance.now() - classifyStarted) / 1000;
  classifyBar.finish();
  // Every record in the search index, as the server's merge thread leaves it a second after the last write.
  (adapters.merger as InlineMerger).mergeAll();
  adapters.db.pragma('wal_checkpoint(TRUNCATE)');
  adapters.close();
  return { label, dir, tenants, records, loadSeconds, classifySeconds };
}

// ---------------------------------------------------------------------------------------------------------
// The server process.

interface Running {
  child: ChildProcess;
  url: string;
  /** From spawn to the line that says it listens. */
  listenMs: number;
  stop(): Promise<void>;
}

/**
 * Starts the local server as bench/support/server.ts does (the same command and settings), but on an
 * existing data directory, which that helper cannot do (it makes a fresh one and deletes it at stop).
 */
async function startServer(dataDir: string): Promise<Running> {
  const t0 = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/server.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', MEMORY_DATA_DIR: dataDir, LOG_LEVEL: 'ERROR', MEMORY_DEFAULT_RATE: '1000000', MEMORY_DEFAULT_BURST: '1000000', MEMORY_DEFAULT_RECORD_QUOTA: '1000000000', MEMORY_DEFAULT_QUERY_QUOTA: '1000000000' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const read = (chunk: Buffer) => {
        out += chunk.toString();
        const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
        if (url) {
          child.stdout!.off('data', read);
          child.stdout!.resume();
          resolve(url);
        }
      };
      child.stdout!.on('data', read);
      child.once('exit', () => reject(new Error(`the server exited before it listened: ${out}`)));
    });
    return { child, url, listenMs: performance.now() - t0, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function memoryOf(child: ChildProcess) {
  return residentMiB(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
}

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

interface Measured {
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

type Start = { listenMs: number; readyMs: number; refused: number };

/** `STARTS` timed starts of each build, interleaved (one of each, then again) so that a busy moment of the shared machine falls on all; one untimed start of each first. */
async function measureStarts(builds: Built[]): Promise<Start[][]> {
  const out: Start[][] = builds.map(() => []);
  for (let round = 0; round <= STARTS; round++) {
    for (const [i, built] of builds.entries()) {
      const s = await timedStart(built, queryIn(built.tenants.find((t) => !t.big)!, seededRandom(SEED)));
      s.client.close();
      await s.server.stop();
      if (round > 0) out[i]!.push({ listenMs: s.listenMs, readyMs: s.readyMs, refused: s.refused });
      note(`${built.label}: start ${round === 0 ? '(untimed)' : round}: ${s.listenMs.toFixed(0)} ms to listen, ${s.readyMs.toFixed(0)} ms to a first search${s.refused ? `, after ${s.refused} refusals` : ''}`);
    }
  }
  return out;
}

async function measure(built: Built, starts: Start[], rng: () => number): Promise<Omit<Measured, 'startSteps'>> {
  const small = built.tenants.filter((t) => !t.big);
  const probe = queryIn(small[0]!, rng);
  const label = `${built.label}`;

  // 2–3. Memory and searches on one more start.
  const { server, client } = await timedStart(built, probe);
  try {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const afterStart = memoryOf(server.child).rss;
    const swept = drawDistinct(small, MEMORY_TENANTS, rng).map((t) => queryIn(t, rng));
    const sweepBar = progress(`${label}: one search in each of ${swept.length} tenants`, swept.length);
    await timedPool(swept, 1, ({ tenant, q }) => search(client, tenant, q), () => sweepBar.tick());
    sweepBar.finish();
    const afterTenantSweep = memoryOf(server.child).rss;

    const workload = drawMany(small, SEARCHES, rng).map((t) => queryIn(t, rng));
    const bar = progress(`${label}: ${SEARCHES} searches over HTTP at concurrency 1`, SEARCHES);
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

/**
 * The steps of the server's start that read the database (local/app.ts, local/backends.ts), timed in this
 * process, median of 5: opening and migrating, the "is this a first start" check (which lists every
 * tenant), releasing leased jobs and the idempotency sweep.
 */
async function startSteps(built: Built): Promise<Record<string, number>> {
  const times: Record<string, number[]> = { open: [], listTenants: [], releaseClaims: [], sweep: [] };
  for (let i = 0; i < 5; i++) {
    let t = performance.now();
    const lap = (name: string) => {
      const now = performance.now();
      times[name]!.push(now - t);
      t = now;
    };
    const adapters = openSqliteAdapters(join(built.dir, 'memory.db'), { mustExist: true });
    lap('open');
    if ((await adapters.keys.listTenants()).length !== built.tenants.length) throw new Error('listTenants did not list every tenant');
    lap('listTenants');
    await adapters.jobs.releaseClaims();
    lap('releaseClaims');
    adapters.records.purgeExpiredIdempotencyKeys();
    lap('sweep');
    adapters.close();
  }
  return Object.fromEntries(Object.entries(times).map(([k, v]) => [k, Math.round(median(v) * 100) / 100]));
}

const run = promisify(execFile);

/** `admin tenant create` as an operator runs it (a CLI process), median of 3: it lists every tenant to check the name. */
async function adminCreateMs(built: Built, tag: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    await run(process.execPath, ['--import', 'tsx', 'local/admin.ts', 'tenant', 'create', '--name', `admin-probe-${tag}-${i}`], {
      cwd: ROOT,
      env: { ...process.env, MEMORY_DATA_DIR: built.dir, LOG_LEVEL: 'ERROR' },
    });
    times.push(performance.now() - t);
  }
  return median(times);
}

// ---------------------------------------------------------------------------------------------------------

const started = new Date();
note(`tenants benchmark: ${TENANTS} tenants × ${PER_TENANT} records, baselines of 1 and ${BASELINE} tenants${values.filler ? ' and a filler database' : ''}; seed ${SEED}; ${cpus().length} cores`);
const builds: Built[] = [];
try {
  builds.push(await build(`${TENANTS} tenants`, [{ count: TENANTS, perTenant: PER_TENANT }], SEED));
  builds.push(await build(`${BASELINE} tenants`, [{ count: BASELINE, perTenant: PER_TENANT }], SEED));
  builds.push(await build('1 tenant', [{ count: 1, perTenant: PER_TENANT }], SEED));
  if (values.filler) {
    builds.push(await build(`${BASELINE} tenants + 1 of ${TENANTS * PER_TENANT}`, [{ count: BASELINE, perTenant: PER_TENANT }, { count: 1, perTenant: TENANTS * PER_TENANT, big: true }], SEED));
  }

  const results: Measured[] = [];
  const admin: Record<string, number> = {};
  const starts = await measureStarts(builds);
  for (const [i, built] of builds.entries()) {
    const m = await measure(built, starts[i]!, seededRandom(SEED + results.length));
    results.push({ ...m, startSteps: await startSteps(built) });
  }
  // Last, since it adds tenants.
  for (const built of builds.slice(0, 2)) admin[built.label] = await adminCreateMs(built, 'x');

  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `tenants-${started.toISOString().slice(0, 10)}-${TENANTS}.json`);
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version };
  writeFileSync(file, `${JSON.stringify({ date: started.toISOString(), machine, options: { tenants: TENANTS, perTenant: PER_TENANT, baseline: BASELINE, searches: SEARCHES, memoryTenants: MEMORY_TENANTS, starts: STARTS, seed: SEED }, results, adminCreateMs: admin }, null, 2)}\n`);

  const f0 = (x: number) => x.toFixed(0);
  const f1 = (x: number) => x.toFixed(1);
  const f2 = (x: number) => x.toFixed(2);
  const rows: [string, (m: Measured) => string][] = [
    ['records', (m) => String(m.records)],
    ['database file (MiB)', (m) => f1(m.dbMiB)],
    [`server start to "listening" (ms, median of ${STARTS})`, (m) => f0(m.listenMs)],
    [`server start to a first search answered (ms, median of ${STARTS})`, (m) => f0(m.readyMs)],
    ['  first searches after a start that answered 503 (all starts)', (m) => String(m.starts.reduce((sum, s) => sum + s.refused, 0))],
    ['  in process: open + migrate (ms)', (m) => f2(m.startSteps.open!)],
    ['  in process: listTenants, the first-start check (ms)', (m) => f2(m.startSteps.listTenants!)],
    ['  in process: releaseClaims + idempotency sweep (ms)', (m) => f2(m.startSteps.releaseClaims! + m.startSteps.sweep!)],
    ['RSS after start (MiB)', (m) => f0(m.memory.afterStart)],
    ['RSS after one search in each of N tenants (MiB)', (m) => `${f0(m.memory.afterTenantSweep)} (N = ${m.memory.sweptTenants})`],
    [`RSS after ${SEARCHES} more searches (MiB); peak`, (m) => `${f0(m.memory.afterSearches)}; ${f0(m.memory.peak)}`],
    [`HTTP search, c=1, ${SEARCHES} in random small tenants: p50 / p99 (ms)`, (m) => `${f2(m.http.p50Ms)} / ${f2(m.http.p99Ms)}`],
    ['engine in process (SqliteSearchIndex), same searches: p50 / p99 (µs)', (m) => `${f0(m.engineUs.p50Ms)} / ${f0(m.engineUs.p99Ms)}`],
    ['load through SqliteRecordStore.create (records/s)', (m) => f0(m.records / m.loadSeconds)],
  ];
  const lines = [
    `| ${['measure', ...results.map((m) => m.label)].join(' | ')} |`,
    `|${' --- |'.repeat(results.length + 1)}`,
    ...rows.map(([name, cell]) => `| ${[name, ...results.map(cell)].join(' | ')} |`),
    `| admin CLI \`tenant create\` (ms, median of 3) | ${results.map((m) => (admin[m.label] === undefined ? '–' : f0(admin[m.label]!))).join(' | ')} |`,
  ];
  process.stdout.write(
    `\n${lines.join('\n')}\n\n${machine.cpus} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB, Node ${machine.node}; ` +
      `${PER_TENANT} records a tenant; searches of 1–3 words of a tenant's own titles, default limit 20.\n`,
  );
  note(`wrote ${file}; searches over HTTP that found nothing: ${emptyAnswers}`);
} finally {
  if (values.keep) note(`data directories kept: ${builds.map((b) => b.dir).join(' ')}`);
  else for (const b of builds) rmSync(b.dir, { recursive: true, force: true });
}
