/**
 * `npx tsx bench/overhead.ts`: the service overhead of a search, fast and repeatable (a minute or two, where
 * `npm run bench` takes an hour): a small corpus through the HTTP API, then every kind of search of the
 * benchmark's workload at concurrency 1 over HTTP and the same searches on the engine in this process,
 * round after round, and per kind the medians over the rounds of each one's p50 and their difference. A
 * `GET /healthz` (no key, one SQLite read) and a `GET /api/v1/usage` (the key, the authorizer cache and the
 * rate limiter, one small read) are timed beside them: the floor of a request on this machine.
 *
 * With `--base <dir>` (another checkout, e.g. `git worktree add /tmp/base <rev>` with node_modules linked)
 * it is a paired A/B in one run: the same corpus is copied into a second data directory, a server of that
 * checkout answers there, and each round times both servers, in alternating order, so that the noise of a
 * shared machine falls on both. Options:
 *   --records N     the corpus (default 5 000)
 *   --from DIR      instead of a corpus written through the API, a copy of a database of
 *                   `bench/engine-profile.ts` (DIR holds its memory.db and engine-profile.json; /tmp/engine-1m
 *                   is the million-record one), searched with that corpus's workload in its tenants (a new key each)
 *   --per-kind N    searches of each kind per round (default 60)
 *   --rounds N      rounds (default 7)
 *   --base DIR      a second checkout to compare with
 *   --cpu-prof DIR  the servers run with `--cpu-prof`, their profiles written to DIR when they stop
 *   --node-flags F  more flags for the servers' `node` (not the loading server's), space-separated: e.g.
 *                   "--log-deopt --logfile=/tmp/v8-%p.log" to see what V8 compiles again and why
 *   --kinds K,…     only these kinds of search (e.g. no-q), for a change that concerns one
 *   --concurrency N the HTTP searches N at a time (default 1; the engine's stay one at a time): with N > 1
 *                   the latencies are those of a loaded server, and the table adds each server's CPU a
 *                   search (its main thread, and all its threads), read from /proc, which is what bounds
 *                   the searches a second when the cores are full
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openSqliteAdapters } from '../shared/adapters/local/index.js';
import { SqliteSearchIndex } from '../shared/adapters/local/search-index.js';
import { SearchMerge } from '../shared/adapters/local/search-merge.js';
import { DEFAULT_SEED, QUERY_KINDS, queryWorkload, tenantsFor, type BenchQuery, type CorpusOptions } from './corpus.js';
import { engineQuery } from './support/engine-query.js';
import { queryString } from './steps/searches.js';
import { loadCorpus } from './steps/writes.js';
import { processCpu } from './support/process-cpu.js';
import { note } from './support/progress.js';
import { BenchHttp } from './support/http.js';
import { median, percentile, timedPool } from './support/stats.js';
import { listeningUrl, readStartup } from './support/server.js';
import { copyProfileDatabase } from './support/profile-database.js';
import { createTenant, keyOfTenant, type BenchTenant } from './support/tenants.js';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '5000' },
    'per-kind': { type: 'string', default: '60' },
    rounds: { type: 'string', default: '7' },
    base: { type: 'string' },
    'cpu-prof': { type: 'string' },
    'node-flags': { type: 'string' },
    kinds: { type: 'string' },
    concurrency: { type: 'string', default: '1' },
    from: { type: 'string' },
  },
});
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const corpusOptions: CorpusOptions = { records: Number(values.records), seed: DEFAULT_SEED };
const perKind = Number(values['per-kind']);
const rounds = Number(values.rounds);
const concurrency = Number(values.concurrency);
if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error('--concurrency must be a positive integer');
const profileDir = values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']);
if (profileDir) mkdirSync(profileDir, { recursive: true });

const LIMITS = { MEMORY_DEFAULT_RATE: '1000000', MEMORY_DEFAULT_BURST: '1000000', MEMORY_DEFAULT_RECORD_QUOTA: '1000000000', MEMORY_DEFAULT_QUERY_QUOTA: '1000000000' };

interface Running {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** The local server of checkout `root` on `dataDir`, started as `npm start` starts it; resolves once it listens. */
/** How to stop every server started, so that a run that fails part-way (a base that cannot open the corpus) stops them all. */
const stops: (() => Promise<void>)[] = [];

async function startServer(root: string, dataDir: string, label: string): Promise<Running> {
  const prof = profileDir && label !== 'load' ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${label}-${Date.now()}.cpuprofile`] : [];
  const flags = label !== 'load' && values['node-flags'] ? values['node-flags'].split(' ').filter(Boolean) : [];
  const child: ChildProcess = spawn(process.execPath, [...prof, ...flags, join(root, 'scripts', 'launch.mjs'), 'server'], {
    cwd: root,
    env: { ...process.env, PORT: '0', MEMORY_DATA_DIR: dataDir, LOG_LEVEL: 'ERROR', ...LIMITS },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  stops.push(stop);
  const url = await readStartup(child, listeningUrl);
  return { url, pid: child.pid!, stop };
}

async function drained(pending: () => number): Promise<void> {
  while (pending() > 0) await new Promise((done) => setTimeout(done, 250));
}

// The corpus, through the API of this checkout's server, classified and merged; then the server stops.
const dataDir = mkdtempSync(join(tmpdir(), 'memory-overhead-'));
const dirs = [dataDir];
try {
  const tenants = new Map<string, BenchTenant>();
  let source: { options: CorpusOptions; midpoint: string };
  if (values.from) {
    const profile = copyProfileDatabase(resolve(values.from), dataDir);
    for (const [name, id] of Object.entries(profile.tenants)) tenants.set(name, await keyOfTenant(dataDir, id));
    source = { options: { records: profile.records, seed: profile.seed }, midpoint: profile.midpoint };
  } else {
    const loader = await startServer(ROOT, dataDir, 'load');
    for (const spec of tenantsFor(corpusOptions)) tenants.set(spec.name, await createTenant(dataDir, spec.name));
    const loadClient = new BenchHttp(loader.url);
    const writes = await loadCorpus(loadClient, tenants, corpusOptions);
    loadClient.close();
    {
      const adapters = openSqliteAdapters(join(dataDir, 'memory.db'));
      await drained(() => adapters.jobs.backlog());
      const merge = new SearchMerge(adapters.db);
      await drained(() => merge.pending());
      adapters.close();
    }
    await loader.stop();
    source = { options: corpusOptions, midpoint: writes.midpoint };
  }

  const variants: { label: string; root: string; dir: string }[] = [{ label: 'change', root: ROOT, dir: dataDir }];
  if (values.base) {
    const baseDir = mkdtempSync(join(tmpdir(), 'memory-overhead-base-'));
    dirs.push(baseDir);
    cpSync(dataDir, baseDir, { recursive: true });
    variants.push({ label: 'base', root: resolve(values.base), dir: baseDir });
  }
  const servers = await Promise.all(variants.map(async (v) => ({ ...v, server: await startServer(v.root, v.dir, v.label) })));
  const clients = servers.map((s) => new BenchHttp(s.server.url, 1));
  const only = values.kinds?.split(',');
  const workload = queryWorkload(source.options, perKind, { since: source.midpoint }).filter((q) => !only || only.includes(q.kind));
  if (workload.length === 0) throw new Error(`no searches of the kinds ${values.kinds}; the kinds are ${QUERY_KINDS.join(', ')}`);
  const adapters = openSqliteAdapters(join(dataDir, 'memory.db'), { merger: () => ({ wake: () => undefined, close: async () => undefined }) });
  const index = new SqliteSearchIndex(adapters.db);
  const onEngine = async ({ tenant, query }: BenchQuery) =>
    void (await index.search(tenants.get(tenant)!.tenant_id, engineQuery(query)));
  const anyKey = [...tenants.values()][0]!.api_key;
  const overHttp = (client: BenchHttp) => async (q: BenchQuery | 'healthz' | 'usage') => {
    const res =
      q === 'healthz' ? await client.send('GET', '/healthz', anyKey) : q === 'usage' ? await client.send('GET', '/api/v1/usage', anyKey) : await client.send('GET', `/api/v1/query?${queryString(q.query)}`, tenants.get(q.tenant)!.api_key);
    if (res.status !== 200) throw new Error(`answered ${res.status} ${res.text}`);
    if (typeof q !== 'string') (answerBytes[q.kind] ??= []).push(Buffer.byteLength(res.text));
  };
  /** The size of each kind's answers, for the table. */
  const answerBytes: Record<string, number[]> = {};
  /** Each server's CPU over its timed searches, µs, and how many: by label. */
  const cpuSpent = new Map<string, { main: number; all: number; client: number; searches: number }>();
  const pidOf = new Map(servers.map((s) => [s.label, s.server.pid]));
  /** The searches of one side at the run's concurrency (the engine's one at a time), a server's CPU counted. */
  const timed = async (side: string, items: readonly BenchQuery[], run: (q: BenchQuery) => Promise<void>) => {
    const pid = pidOf.get(side);
    if (pid === undefined) return timedPool(items, 1, run);
    const before = processCpu(pid);
    const client = process.cpuUsage();
    const result = await timedPool(items, concurrency, run);
    const used = process.cpuUsage(client);
    const after = processCpu(pid);
    const spent = cpuSpent.get(side) ?? { main: 0, all: 0, client: 0, searches: 0 };
    cpuSpent.set(side, {
      main: spent.main + after.main - before.main,
      all: spent.all + after.all - before.all,
      client: spent.client + used.user + used.system,
      searches: spent.searches + items.length,
    });
    return result;
  };
  // Warm every side once.
  await timedPool(workload, 1, onEngine);
  for (const client of clients) await timedPool(workload, 1, overHttp(client));

  const kinds = [...QUERY_KINDS.filter((k) => workload.some((q) => q.kind === k)), 'all'] as const;
  /** p50 per round: by side, by kind. */
  const p50s = new Map<string, Map<string, number[]>>();
  const record = (side: string, kind: string, ms: number[]) => {
    const bySide = p50s.get(side) ?? p50s.set(side, new Map()).get(side)!;
    (bySide.get(kind) ?? bySide.set(kind, []).get(kind)!).push(percentile([...ms].sort((a, b) => a - b), 50));
  };
  const floor = Array.from({ length: perKind }, () => 'healthz' as const);
  const usage = Array.from({ length: perKind }, () => 'usage' as const);
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? servers.map((_, i) => i) : servers.map((_, i) => i).reverse();
    const sides: { side: string; run: (q: BenchQuery) => Promise<void> }[] = [{ side: 'engine', run: onEngine }, ...order.map((i) => ({ side: servers[i]!.label, run: overHttp(clients[i]!) }))];
    for (const kind of QUERY_KINDS) {
      const items = workload.filter((q) => q.kind === kind);
      if (items.length === 0) continue;
      for (const { side, run } of sides) record(side, kind, (await timed(side, items, run)).latencies);
    }
    for (const { side, run } of sides.slice(1)) {
      // Interleaved kinds, as the benchmark sends them.
      record(side, 'all', (await timed(side, workload, run)).latencies);
    }
    record('engine', 'all', (await timedPool(workload, 1, onEngine)).latencies);
    for (const i of order) {
      record(servers[i]!.label, 'healthz', (await timedPool(floor, 1, overHttp(clients[i]!) as (q: 'healthz') => Promise<void>)).latencies);
      record(servers[i]!.label, 'usage', (await timedPool(usage, 1, overHttp(clients[i]!) as (q: 'usage') => Promise<void>)).latencies);
    }
    note(`round ${round + 1} of ${rounds} done`);
  }
  adapters.close();
  for (const client of clients) client.close();
  await Promise.all(servers.map((s) => s.server.stop()));

  const ms = (x: number | undefined) => (x === undefined ? '' : x.toFixed(3));
  const med = (side: string, kind: string) => {
    const xs = p50s.get(side)?.get(kind);
    return xs && xs.length ? median(xs) : undefined;
  };
  answerBytes.all = Object.values(answerBytes).flat();
  const head = ['kind', 'answer bytes (median)', 'engine', ...servers.map((s) => `http ${s.label}`), ...servers.map((s) => `overhead ${s.label}`), ...(servers.length > 1 ? ['change/base (http)', 'change < base in rounds'] : [])];
  const lines = [head.join('\t')];
  for (const kind of [...kinds, 'healthz', 'usage']) {
    const engine = kind === 'healthz' || kind === 'usage' ? undefined : med('engine', kind);
    const http = servers.map((s) => med(s.label, kind));
    const overhead = http.map((h) => (h === undefined || engine === undefined ? undefined : h - engine));
    const cells = [kind, answerBytes[kind] ? String(median(answerBytes[kind]!)) : '', ms(engine), ...http.map(ms), ...overhead.map(ms)];
    if (servers.length > 1) {
      cells.push((http[0]! / http[1]!).toFixed(3));
      const a = p50s.get('change')!.get(kind)!;
      const b = p50s.get('base')!.get(kind)!;
      cells.push(`${a.filter((x, i) => x < b[i]!).length}/${a.length}`);
    }
    lines.push(cells.join('\t'));
  }
  console.log(`medians over ${rounds} rounds of each round's p50 (ms), ${source.options.records} records, ${perKind} searches a kind a round, concurrency ${concurrency} over HTTP`);
  console.log(lines.join('\n'));
  for (const [label, spent] of cpuSpent) {
    const per = (us: number) => (us / spent.searches).toFixed(0);
    console.log(
      `${label}: ${per(spent.main)} µs of the server's main thread a search, ${per(spent.all)} µs of all its threads; the client (this process) ${per(spent.client)} µs (${spent.searches} searches)`,
    );
  }
} finally {
  await Promise.all(stops.map((stop) => stop()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
