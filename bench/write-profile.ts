/**
 * Durable writes over HTTP, in minutes rather than the full run's hour, and what they cost the server:
 * `npx tsx bench/write-profile.ts [--records N] [--concurrency C] [--rounds R] [--base CHECKOUT]`.
 *
 * Each round starts a fresh server (as `npm start` does, compiled), writes N records of the benchmark's
 * corpus at concurrency C through `POST /api/v1/record`, and reports the writes a second, the p50 and p99,
 * the server's CPU per write during the load (its main thread, which answers the requests, and all its
 * threads), the classification jobs still waiting when the load ends, and the CPU per write once the
 * classification and the merge have caught up. CPU is read from /proc (Linux), so it is what the server
 * spent, whatever else the machine ran. With `--base`, another checkout's server (its dist/ built, e.g. a
 * `git worktree` of an earlier commit) takes turns with this one, round by round, on the same records.
 * `--cpu-prof DIR` profiles each server's threads. The figures of each round, then the medians.
 *
 * The records that waited for the search index's merge are read on the server's file every 250 ms, and each
 * round reports the most, and the most in each quarter of the load: over a load of many merges (each
 * waits for 4 096 records or a second), level while the merge keeps up, rising when it falls behind.
 *
 * `--from DIR` writes into a copy of a database of `bench/engine-profile.ts` (DIR holds its memory.db and
 * engine-profile.json), into its tenants (a new key each) rather than new ones, so that the merge takes the
 * writes into a big index: a tenant of 500 000 records in /tmp/engine-1m. The copy's classification jobs,
 * which the profile's import left queued, are dropped first, so that a round waits for its own writes only.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { SearchMerge } from '../shared/adapters/local/search-merge.js';
import { DEFAULT_SEED, generateCorpus, tenantsFor } from './corpus.js';
import { BenchHttp } from './support/http.js';
import { processCpu } from './support/process-cpu.js';
import { copyProfileDatabase } from './support/profile-database.js';
import { note } from './support/progress.js';
import { listeningUrl, readStartup } from './support/server.js';
import { latencyStats } from './support/stats.js';
import { sampleBacklog } from './steps/writes.js';
import { createTenant, keyOfTenant } from './support/tenants.js';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '3' },
    base: { type: 'string' },
    'cpu-prof': { type: 'string' },
    from: { type: 'string' },
  },
});
const records = Number(values.records);
const concurrency = Number(values.concurrency);
const rounds = Number(values.rounds);
if (![records, concurrency, rounds].every((n) => Number.isInteger(n) && n > 0)) throw new Error('--records, --concurrency and --rounds must be positive integers');
const here = fileURLToPath(new URL('..', import.meta.url));
const checkouts = [...(values.base ? [{ label: 'base', root: resolve(values.base) }] : []), { label: 'this', root: here }];
const LIMITS = { MEMORY_DEFAULT_RATE: '1000000', MEMORY_DEFAULT_BURST: '1000000', MEMORY_DEFAULT_RECORD_QUOTA: '1000000000', MEMORY_DEFAULT_QUERY_QUOTA: '1000000000' };

interface Round {
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** The server's main thread, µs of CPU a write, during the load. */
  mainUs: number;
  /** All the server's threads, µs of CPU a write, during the load. */
  allUs: number;
  /** All its threads, µs a write, until the classification and the merge had caught up. */
  caughtUpUs: number;
  jobsLeft: number;
  /** The most records that waited for the merge during the load, and the most in each quarter of it. */
  backlog: number;
  byQuarter: number[];
}

const corpusOptions = { records, seed: DEFAULT_SEED };
const items = [...generateCorpus(corpusOptions)];

async function round(root: string): Promise<Round> {
  const dataDir = mkdtempSync(join(tmpdir(), 'memory-write-profile-'));
  const existing = values.from ? copyProfileDatabase(resolve(values.from), dataDir).tenants : null;
  const prof = values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${resolve(values['cpu-prof'])}`] : [];
  const child = spawn(process.execPath, [...prof, join(root, 'scripts', 'launch.mjs'), 'server'], {
    cwd: root,
    env: { ...process.env, PORT: '0', MEMORY_DATA_DIR: dataDir, LOG_LEVEL: 'ERROR', ...LIMITS },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  // The server's file, read beside it once the server has made it: the records waiting for the merge, and the
  // classification jobs.
  let file: Database.Database | undefined;
  try {
    const url = await readStartup(child, listeningUrl);
    file = new Database(join(dataDir, 'memory.db'), { readonly: true });
    const keys = new Map<string, string>();
    for (const spec of tenantsFor(corpusOptions)) {
      const id = existing?.[spec.name];
      if (existing && id === undefined) throw new Error(`${values.from} has no tenant ${spec.name}`);
      const tenant = id === undefined ? await createTenant(dataDir, spec.name) : await keyOfTenant(dataDir, id);
      keys.set(spec.name, tenant.api_key);
    }
    const client = new BenchHttp(url);
    const cpu = () => processCpu(child.pid!);
    const before = cpu();
    const latencies: number[] = [];
    let taken = 0;
    const merge = new SearchMerge(file);
    const started = performance.now();
    const backlog = sampleBacklog(() => merge.waitingAtMost());
    const progressLine = setInterval(() => note(`${latencies.length} of ${records} written, ${backlog.last()} waiting for the merge`), 10_000);
    let waited: ReturnType<typeof backlog.stop>;
    try {
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (taken < records) {
            const item = items[taken++]!;
            const t = performance.now();
            const res = await client.send('POST', '/api/v1/record', keys.get(item.tenant)!, item.record);
            latencies.push(performance.now() - t);
            if (res.status !== 201) throw new Error(`a write answered ${res.status} ${res.text}`);
          }
        }),
      );
    } finally {
      waited = backlog.stop();
      clearInterval(progressLine);
    }
    const stats = latencyStats(latencies, performance.now() - started);
    const loaded = cpu();
    const jobs = file.prepare('SELECT count(*) FROM classification_jobs').pluck();
    const jobsLeft = jobs.get() as number;
    while ((jobs.get() as number) + merge.pending() > 0) await new Promise((r) => setTimeout(r, 200));
    const caughtUp = cpu();
    const per = (us: number) => Math.round(us / records);
    return { perSecond: stats.perSecond, p50Ms: stats.p50Ms, p99Ms: stats.p99Ms, mainUs: per(loaded.main - before.main), allUs: per(loaded.all - before.all), caughtUpUs: per(caughtUp.all - before.all), jobsLeft, backlog: waited.maxMergeBacklog, byQuarter: waited.mergeBacklogByQuarter };
  } finally {
    file?.close();
    child.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const results = new Map<string, Round[]>(checkouts.map(({ label }) => [label, []]));
for (let r = 0; r < rounds; r++) {
  // Alternating which goes first, so that neither always meets the machine as the other left it.
  const order = r % 2 === 0 ? checkouts : [...checkouts].reverse();
  for (const { label, root } of order) {
    const result = await round(root);
    results.get(label)!.push(result);
    note(`round ${r + 1} ${label}: ${JSON.stringify(result)}`);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`\n${records} writes at concurrency ${concurrency}, ${rounds} rounds, medians:\n`);
console.log('| server | writes/s | p50 ms | p99 ms | main thread µs/write | all threads µs/write | jobs left | µs/write caught up | waiting for the merge, most |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const [label, rs] of results) {
  const m = (key: Exclude<keyof Round, 'byQuarter'>) => median(rs.map((x) => x[key]));
  console.log(`| ${label} | ${m('perSecond')} | ${m('p50Ms')} | ${m('p99Ms')} | ${m('mainUs')} | ${m('allUs')} | ${m('jobsLeft')} | ${m('caughtUpUs')} | ${m('backlog')} |`);
}
