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
 *
 * Its parts: tenants-build.ts (the data directories), tenants-server.ts (the server process), tenants-measure.ts
 * (starts, memory, searches), tenants-steps.ts (a start's steps in process, the admin CLI) and tenants-report.ts.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_SEED } from './corpus.js';
import { note } from './support/progress.js';
import { seededRandom } from './support/tenant-queries.js';
import { build, type Built } from './tenants-build.js';
import { emptyAnswerCount, measure, measureStarts, type Measured } from './tenants-measure.js';
import { resultsTable } from './tenants-report.js';
import { adminCreateMs, startSteps } from './tenants-steps.js';

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

const started = new Date();
note(`tenants benchmark: ${TENANTS} tenants × ${PER_TENANT} records, baselines of 1 and ${BASELINE} tenants${values.filler ? ' and a filler database' : ''}; seed ${SEED}; ${cpus().length} cores`);
const builds: Built[] = [];
try {
  builds.push(await build(`${TENANTS} tenants`, [{ count: TENANTS, perTenant: PER_TENANT }], SEED, { classify: values.classify }));
  builds.push(await build(`${BASELINE} tenants`, [{ count: BASELINE, perTenant: PER_TENANT }], SEED, { classify: values.classify }));
  builds.push(await build('1 tenant', [{ count: 1, perTenant: PER_TENANT }], SEED, { classify: values.classify }));
  if (values.filler) {
    builds.push(await build(`${BASELINE} tenants + 1 of ${TENANTS * PER_TENANT}`, [{ count: BASELINE, perTenant: PER_TENANT }, { count: 1, perTenant: TENANTS * PER_TENANT, big: true }], SEED, { classify: values.classify }));
  }

  const results: Measured[] = [];
  const admin: Record<string, number> = {};
  const starts = await measureStarts(builds, { starts: STARTS, seed: SEED });
  for (const [i, built] of builds.entries()) {
    const m = await measure(built, starts[i]!, seededRandom(SEED + results.length), { memoryTenants: MEMORY_TENANTS, searches: SEARCHES });
    results.push({ ...m, startSteps: await startSteps(built) });
  }
  // Last, since it adds tenants.
  for (const built of builds.slice(0, 2)) admin[built.label] = await adminCreateMs(built, 'x');

  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `tenants-${started.toISOString().slice(0, 10)}-${TENANTS}.json`);
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version };
  writeFileSync(file, `${JSON.stringify({ date: started.toISOString(), machine, options: { tenants: TENANTS, perTenant: PER_TENANT, baseline: BASELINE, searches: SEARCHES, memoryTenants: MEMORY_TENANTS, starts: STARTS, seed: SEED }, results, adminCreateMs: admin }, null, 2)}\n`);

  const lines = resultsTable(results, admin, { starts: STARTS, searches: SEARCHES });
  process.stdout.write(
    `\n${lines.join('\n')}\n\n${machine.cpus} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB, Node ${machine.node}; ` +
      `${PER_TENANT} records a tenant; searches of 1–3 words of a tenant's own titles, default limit 20.\n`,
  );
  note(`wrote ${file}; searches over HTTP that found nothing: ${emptyAnswerCount()}`);
} finally {
  if (values.keep) note(`data directories kept: ${builds.map((b) => b.dir).join(' ')}`);
  else for (const b of builds) rmSync(b.dir, { recursive: true, force: true });
}
