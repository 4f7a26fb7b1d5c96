/**
 * `npx tsx bench/engine-profile.ts [options]`: the engine alone at a million records, fast enough to iterate on.
 * Builds the benchmark corpus (generateCorpus, the default seed, the same tenants) ONCE into a kept
 * directory through the real SQLite adapters (imports in big transactions, then the whole tail merged into
 * the index; about 6 minutes here), then times the engine-only searches as `npm run bench` step 4 does (SqliteSearchIndex with
 * parseQuery, the focus workload of the biggest tenant, one untimed pass then `--rounds` rounds), printing
 * p50/p99 per kind. Options:
 *   --dir D        the kept database (default /tmp/engine-1m; built when it has none)
 *   --records N    the corpus size (default 1 000 000)
 *   --rounds R     timed rounds of the workload (default 4)
 *   --kind K       only this kind (with --reps, for `node --cpu-prof`)
 *   --reps N       repeat the kind's searches N times, untimed per query, for a profile
 *   --ab ROOT      a paired A/B: ROOT is another checkout (a `git worktree` with node_modules linked); its
 *                  SqliteSearchIndex and this one's run alternately, round by round, on the same database,
 *                  and every search's hits (records and ranks, in order) must be the same in both; by kind,
 *                  the median over the rounds of the p50s' ratio and of the round totals' ratio. Run
 *                  it against an identical checkout too (an A/A): on a shared 2-core machine that gave
 *                  0.80 to 1.04 by kind over 12 rounds, the noise any change's ratio is to be read against
 *   --tenant T     another tenant (default northwind-support)
 *   --counts       for each search (of --kind, or of every kind), how many blocks each clause decoded of
 *                  how many it has, and the rows and statements it read from SQLite: what block-max skips
 *   --cache-mb N   what the search connection keeps of the index's blocks between searches, in MiB
 *                  (MEMORY_SEARCH_CACHE_MB; 128 unless given; 0 keeps none), and --base-cache-mb N the --ab
 *                  checkout's (the same unless given): a budget against another in one A/B
 *   --cpu          time each search by the process's CPU time (process.cpuUsage) rather than the clock:
 *                  on a shared machine a search's wall time includes the waits for a core, its CPU time
 *                  much less so, which is what an A/B on a busy machine wants. It counts all the process's
 *                  threads, so it is for two versions of the same searches, not two sizes: the commonest
 *                  words at 100 000 and 1 000 000 records (each size's own draw of them) took 5.57 and
 *                  11.33 ms by it (2.03×), and by the clock, in the same half hour, 2.60 and 9.00 ms, then
 *                  2.52 and 8.81 (3.46× and 3.50×)
 *
 * The records are imported a tenant's batch at a time, so a tenant's document numbers come in runs of up to
 * 5 000 where the HTTP writes of `npm run bench` interleave the tenants; the records' times are spaced
 * 10 ms apart, and `since` searches take the midpoint as the benchmark does.
 *
 * A profile of one kind: `node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/engine-profile.ts
 * --kind common-words --reps 20`.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { openSqliteAdapters } from '../shared/adapters/local/index.js';
import { SqliteSearchIndex } from '../shared/adapters/local/search-index.js';
import { SearchMerge } from '../shared/adapters/local/search-merge.js';
import { SqlitePostingStorage } from '../shared/adapters/local/posting-storage.js';
import { ClauseCursor } from '../shared/search/cursor.js';
import { newRecord, type StoredRecord } from '../shared/domain/record.js';
import { DEFAULT_SEED, generateCorpus, QUERY_KINDS, queryWorkload, tenantsFor, type BenchQuery, type CorpusOptions } from './corpus.js';
import { engineQuery } from './support/engine-query.js';
import { note, progress } from './support/progress.js';
import { median, percentile } from './support/stats.js';
import { PROFILE_META, type ProfileDatabase } from './support/profile-database.js';

const { values } = parseArgs({
  options: {
    dir: { type: 'string', default: '/tmp/engine-1m' },
    records: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '4' },
    kind: { type: 'string' },
    reps: { type: 'string' },
    ab: { type: 'string' },
    tenant: { type: 'string', default: 'northwind-support' },
    cpu: { type: 'boolean', default: false },
    counts: { type: 'boolean', default: false },
    'cache-mb': { type: 'string' },
    'base-cache-mb': { type: 'string' },
  },
});
const corpusOptions: CorpusOptions = { records: Number(values.records), seed: DEFAULT_SEED };
const dir = resolve(values.dir!);
const file = join(dir, 'memory.db');
const metaFile = join(dir, PROFILE_META);
/** The per-kind count of the focus workload, as bench/run.ts has it for a full run. */
const FOCUS_PER_KIND = 30;
const IMPORT_BATCH = 5_000;
/** The records' times: one every 10 ms up to the build, so `since` the midpoint keeps the newer half. */
const SPACING_MS = 10;

if (!existsSync(metaFile)) await build();
const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as ProfileDatabase;
if (meta.records !== corpusOptions.records) throw new Error(`${dir} holds ${meta.records} records, not ${corpusOptions.records}: give another --dir`);

const specs = tenantsFor(corpusOptions);
const focus = queryWorkload(corpusOptions, FOCUS_PER_KIND * specs.length, { since: meta.midpoint }).filter(
  (q) => q.tenant === values.tenant && (values.kind === undefined || q.kind === values.kind),
);
if (focus.length === 0) throw new Error(`no searches of ${values.kind ?? 'any kind'} for ${values.tenant}`);
const tenantId = meta.tenants[values.tenant!]!;

type Searcher = (q: BenchQuery) => string;
const adapters = openSqliteAdapters(file, { mustExist: true, merger: () => ({ wake: () => undefined, close: async () => undefined }) });
const mebibytes = (value: string | undefined) => (value === undefined ? undefined : Number(value) * 2 ** 20);
const cacheBytes = mebibytes(values['cache-mb']);
const searcherOf = (Index: typeof SqliteSearchIndex, blockCacheBytes = cacheBytes): Searcher => {
  const index = new Index(adapters.db, { blockCacheBytes });
  return ({ query }) =>
    index
      .searchRows(tenantId, engineQuery(query))
      .map((r) => `${r.seq}:${r.rank}`)
      .join(',');
};
const current = searcherOf(SqliteSearchIndex);

if (values.counts) {
  // Counted by wrapping the cursor's and the storage's reads, in this process only.
  const decoded = new Map<ClauseCursor, Set<number>>();
  const block = ClauseCursor.prototype.block;
  ClauseCursor.prototype.block = function (this: ClauseCursor, i: number) {
    if (!decoded.has(this)) decoded.set(this, new Set());
    decoded.get(this)!.add(i);
    return block.call(this, i);
  };
  const reads = { statements: 0, rows: 0 };
  const storage = SqlitePostingStorage.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of ['block', 'blockRange', 'positions', 'positionRange', 'blocksAt']) {
    const read = storage[name]!;
    storage[name] = function (this: unknown, ...args: unknown[]) {
      const got = read.apply(this, args);
      reads.statements++;
      reads.rows += Array.isArray(got) ? got.length : got ? 1 : 0;
      return got;
    };
  }
  for (const q of focus) {
    decoded.clear();
    reads.statements = reads.rows = 0;
    current(q);
    const clauses = [...decoded].map(([c, read]) => `clause ${c.order}: ${read.size} of ${c.metas.length} blocks`).join(', ');
    console.log(`${q.kind} ${JSON.stringify(q.query.q)} k=${q.query.limit ?? 20}: ${clauses || 'no blocks'}; ${reads.rows} rows in ${reads.statements} statements`);
  }
} else if (values.reps !== undefined) {
  const reps = Number(values.reps);
  const started = performance.now();
  for (let i = 0; i < reps; i++) for (const q of focus) current(q);
  const ms = performance.now() - started;
  note(`${values.kind ?? 'all kinds'}: ${reps} × ${focus.length} searches, ${(ms / (reps * focus.length)).toFixed(3)} ms each`);
} else if (values.ab !== undefined) {
  const root = resolve(values.ab);
  const base = (await import(pathToFileURL(join(root, 'shared/adapters/local/search-index.ts')).href)) as { SqliteSearchIndex: typeof SqliteSearchIndex };
  const other = searcherOf(base.SqliteSearchIndex, mebibytes(values['base-cache-mb']) ?? cacheBytes);
  // Exactness first: the same hits, in the same order with the same ranks, for every search.
  let differ = 0;
  for (const q of focus) {
    if (current(q) !== other(q)) {
      differ++;
      if (differ <= 5) console.log(`differs: ${q.kind} ${JSON.stringify(q.query)}`);
    }
  }
  console.log(differ === 0 ? `same hits for all ${focus.length} searches` : `${differ} of ${focus.length} searches differ`);
  const rounds = Number(values.rounds);
  const times = { base: new Map<string, number[][]>(), change: new Map<string, number[][]>() };
  for (let r = 0; r < rounds * 2; r++) {
    // Alternating, base first on even rounds, the change first on odd ones.
    const order: [keyof typeof times, Searcher][] = r % 2 === 0 ? [['base', other], ['change', current]] : [['change', current], ['base', other]];
    for (const kind of QUERY_KINDS) {
      const items = focus.filter((q) => q.kind === kind);
      if (items.length === 0) continue;
      for (const [name, search] of order) {
        const lat: number[] = [];
        for (const q of items) lat.push(timed(search, q));
        const byRound = times[name].get(kind) ?? [];
        byRound.push(lat);
        times[name].set(kind, byRound);
      }
    }
  }
  console.log(values.cpu ? 'CPU time a search' : 'wall time a search');
  console.log('kind             base p50 / p99        change p50 / p99      p50 ratio   total ratio (medians of rounds)');
  const total = (lat: number[]) => lat.reduce((sum, x) => sum + x, 0);
  for (const kind of QUERY_KINDS) {
    const b = times.base.get(kind);
    const c = times.change.get(kind);
    if (!b || !c) continue;
    // The p50's ratio, and the ratio of the round's total time, which a change to the costliest searches moves.
    const ratios = b.map((lat, i) => p(c[i]!, 50) / p(lat, 50));
    const totals = b.map((lat, i) => total(c[i]!) / total(lat));
    console.log(
      `${kind.padEnd(16)} ${fmt(p(b.flat(), 50))} / ${fmt(p(b.flat(), 99))}   ${fmt(p(c.flat(), 50))} / ${fmt(p(c.flat(), 99))}   ${median(ratios).toFixed(3)}×      ${median(totals).toFixed(3)}×`,
    );
  }
} else {
  for (const q of focus) current(q);
  const rounds = Number(values.rounds);
  const all: number[] = [];
  console.log(`${values.tenant}, ${focus.length} searches × ${rounds} rounds`);
  for (const kind of QUERY_KINDS) {
    const items = focus.filter((q) => q.kind === kind);
    if (items.length === 0) continue;
    const lat: number[] = [];
    for (let r = 0; r < rounds; r++) for (const q of items) lat.push(timed(current, q));
    all.push(...lat);
    console.log(`${kind.padEnd(16)} p50 ${fmt(p(lat, 50))}  p99 ${fmt(p(lat, 99))}`);
  }
  console.log(`${'all'.padEnd(16)} p50 ${fmt(p(all, 50))}  p99 ${fmt(p(all, 99))}`);
}
adapters.close();

function timed(search: Searcher, q: BenchQuery): number {
  if (values.cpu) {
    const before = process.cpuUsage();
    search(q);
    const used = process.cpuUsage(before);
    return (used.user + used.system) / 1000;
  }
  const started = performance.now();
  search(q);
  return performance.now() - started;
}

function p(values: readonly number[], at: number): number {
  return percentile([...values].sort((a, b) => a - b), at);
}

function fmt(ms: number): string {
  return `${ms.toFixed(2).padStart(6)} ms`;
}

/** Writes the corpus through the adapters, in transactions of IMPORT_BATCH records, then merges the whole tail. */
async function build(): Promise<void> {
  mkdirSync(dir, { recursive: true });
  if (existsSync(file)) throw new Error(`${file} exists without ${metaFile}: a build was interrupted; remove the directory`);
  note(`building ${corpusOptions.records} records into ${file}`);
  const built = openSqliteAdapters(file, { merger: () => ({ wake: () => undefined, close: async () => undefined }) });
  const limits = { recordQuota: 10_000_000, queryQuota: 10_000_000, rate: 1000, burst: 1000 };
  const tenants: Record<string, string> = {};
  for (const spec of tenantsFor(corpusOptions)) tenants[spec.name] = (await built.keys.createTenant({ name: spec.name, limits })).tenant_id;
  const start = Date.now() - corpusOptions.records * SPACING_MS;
  const batches = new Map<string, StoredRecord[]>();
  const writing = progress(`writing ${corpusOptions.records} records`, corpusOptions.records);
  const flush = async (tenant: string) => {
    const batch = batches.get(tenant) ?? [];
    if (batch.length === 0) return;
    await built.records.import(tenants[tenant]!, batch);
    writing.tick(batch.length);
    batches.set(tenant, []);
  };
  let i = 0;
  let midpoint = '';
  for (const { tenant, record } of generateCorpus(corpusOptions)) {
    const stored = newRecord(tenants[tenant]!, record, new Date(start + i * SPACING_MS));
    if (i === Math.floor(corpusOptions.records / 2)) midpoint = stored.created_at;
    i++;
    const batch = batches.get(tenant) ?? [];
    batch.push(stored);
    batches.set(tenant, batch);
    if (batch.length >= IMPORT_BATCH) await flush(tenant);
  }
  for (const tenant of batches.keys()) await flush(tenant);
  writing.finish();
  const merge = new SearchMerge(built.db);
  const merging = progress('merging the tail into the index', merge.pending());
  for (let n = merge.next(16_384); n > 0; n = merge.next(16_384)) merging.tick(n);
  merging.finish();
  built.db.pragma('wal_checkpoint(TRUNCATE)');
  built.close();
  writeFileSync(metaFile, `${JSON.stringify({ records: corpusOptions.records, seed: DEFAULT_SEED, tenants, midpoint } satisfies ProfileDatabase, null, 2)}\n`);
}
