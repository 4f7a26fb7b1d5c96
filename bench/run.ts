/**
 * `npm run bench`: the whole benchmark on this machine, in one run. Writes bench/results/<date>.json (with
 * `-quick` or `-<records>` in the name for a quick run or another size) and, for a full run of 100 000 or
 * 1 000 000 records, that size's figures in docs/benchmarks.md. Options:
 *   --quick        about a minute: 5 000 records, fewer searches
 *   --records N    the corpus size of a full run (default 100 000; 1 000 000 works, and then writes the
 *                  100 000-record corpus too, on a server of its own, to time the growth in this run)
 *   --peers        PostgreSQL 15 side by side (installed from Debian's packages if it is missing)
 *   --seed S       another corpus
 */
import Database from 'better-sqlite3';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openSqliteAdapters } from '../shared/adapters/local/index.js';
import { SqliteSearchIndex } from '../shared/adapters/local/search-index.js';
import { SearchMerge } from '../shared/adapters/local/search-merge.js';
import { MemoryClient } from '../sdk/src/index.js';
import { measureColdStarts } from './cold-start.js';
import { DEFAULT_SEED, generateCorpus, queryWorkload, tenantsFor, type BenchQuery, type CorpusOptions } from './corpus.js';
import { engineQuery } from './support/engine-query.js';
import { startPostgres, type PostgresPeer } from './peers/postgres.js';
import { loadIntoPeer, loadThroughApi, scoreSet, type QualityResult } from './quality/score.js';
import { agentMemory, agentQuestions, cacm, cranfield } from './quality/sets.js';
import { CUT_OFF_SECTION, cutOffMarkdown, DOC_FILES as CUT_OFF_DOCS, rankAll, suggestCutOff } from './quality/cut-off.js';
import { identifierLookups } from './quality/identifiers.js';
import { SUGGESTED_MIN_RANK } from '../shared/domain/rank.js';
import { evaluateGoals, markdownReport, type BenchResults, type TenantRun } from './report.js';
import { pairedGrowth, type GrowthRun } from './steps/growth.js';
import { runHostileSearches } from './steps/hostile.js';
import { runSearches, queryString, type SearchRun } from './steps/searches.js';
import { loadCorpus } from './steps/writes.js';
import { note, progress } from './support/progress.js';
import { checkGeneratedSection, replaceGeneratedSection } from './support/doc-section.js';
import { BenchHttp } from './support/http.js';
import { floorKey, startHttpFloor, type HttpFloor } from './support/http-floor.js';
import { probeMachine, probeSentence } from './support/machine-probe.js';
import { startBenchServer } from './support/server.js';
import { createTenant, type BenchTenant } from './support/tenants.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    records: { type: 'string' },
    peers: { type: 'boolean', default: false },
    seed: { type: 'string' },
  },
});
const quick = values.quick!;
const corpusOptions: CorpusOptions = { records: Number(values.records ?? (quick ? 5_000 : 100_000)), seed: Number(values.seed ?? DEFAULT_SEED) };
if (!Number.isInteger(corpusOptions.records) || corpusOptions.records < 100) throw new Error('--records must be an integer of at least 100');
const perKind = quick ? 12 : 60;
/** Searches of each kind in each of the two tenants the engine is measured on alone. */
const focusPerKind = quick ? 10 : 30;
const rounds = quick ? 2 : 4;
const CONCURRENCIES = [1, 8, 32] as const;
const started = new Date();
// docs/benchmarks.md has a generated section for the default run and one for the million-record run; any
// other run prints its report. Checked now rather than after an hour of measuring.
const docFile = fileURLToPath(new URL('../docs/benchmarks.md', import.meta.url));
const section = quick ? null : ({ 100_000: 'npm run bench', 1_000_000: 'npm run bench -- --records 1000000' } as Record<number, string>)[corpusOptions.records];
if (section) checkGeneratedSection(docFile, section);
note(`benchmark: ${quick ? 'quick' : 'full'} run, ${corpusOptions.records} records, seed ${corpusOptions.seed}${values.peers ? ', with PostgreSQL' : ''}`);
// 0. What this machine does at this hour, to read the run's figures by (support/machine-probe.ts).
const probe = await probeMachine();
note(probeSentence(probe));

// 1–2. The corpus through the HTTP API.
const { server, tenants, client, writes } = await writtenCorpus(corpusOptions);
const workload = queryWorkload(corpusOptions, perKind, { since: writes.midpoint });

// 3. The searches at each concurrency: over HTTP; then the same requests on the HTTP floor, which answers
// them with the bodies the service gave (support/http-floor.ts): what HTTP alone costs on this machine; then,
// with --peers, on PostgreSQL, loaded beforehand with the same corpus. The three run one after the other at
// each concurrency, so that their ratios are of runs minutes apart: this machine's speed moves from one hour
// to the next, by two or three times on some days.
const pg = values.peers ? await loadPostgres() : null;
const http: SearchRun[] = [];
const floor: SearchRun[] = [];
const pgRuns: SearchRun[] = [];
/** Each search's answer, for the HTTP floor to give back: all of them once the first run is done. */
const answers = new Map<string, string>();
const searchPath = (query: BenchQuery['query']) => `/api/v1/query?${queryString(query)}`;
let floorServer: HttpFloor | undefined;
let floorClient: BenchHttp | undefined;
for (const concurrency of CONCURRENCIES) {
  http.push(
    await runSearches('searches over HTTP', workload, concurrency, rounds, async ({ tenant, query }) => {
      const { api_key } = tenants.get(tenant)!;
      const path = searchPath(query);
      const res = await client.send('GET', path, api_key);
      if (res.status !== 200) throw new Error(`a search answered ${res.status} ${res.text}`);
      answers.set(floorKey(api_key, path), res.text);
    }),
  );
  floorServer ??= await startHttpFloor(answers);
  const onFloor = (floorClient ??= new BenchHttp(floorServer.url));
  floor.push(
    await runSearches('the same searches on the HTTP floor', workload, concurrency, rounds, async ({ tenant, query }) => {
      const path = searchPath(query);
      const res = await onFloor.send('GET', path, tenants.get(tenant)!.api_key);
      if (res.status !== 200) throw new Error(`the HTTP floor answered ${res.status}: it holds no answer to ${path}`);
    }),
  );
  if (pg) {
    pgRuns.push(
      await runSearches('searches on PostgreSQL', workload, concurrency, rounds, ({ tenant, query }) =>
        pg.search(tenant, { q: query.q, agent_id: query.agent_id ?? undefined, type: query.type, client: query.client ?? undefined, since: query.since, limit: query.limit ?? 20 }),
      ),
    );
  }
}
floorClient?.close();
await floorServer?.stop();
const peer: BenchResults['peer'] = pg && { name: pg.version, searches: pgRuns, quality: [] };

// 4. The same searches straight on the SQLite index, in this process: the engine's own cost. The server
// is idle meanwhile (WAL lets this reader in), and stops afterwards. Then, on the engine alone, the biggest
// tenant and the smallest, each with `focusPerKind` searches of every kind of its own.
const { search: onEngine, close: closeEngine } = engineOn(server.dataDir, tenants);
const engine = await runSearches('searches on the SQLite index, in process', workload, 1, rounds, onEngine);
const specs = tenantsFor(corpusOptions);
const focusWorkload = queryWorkload(corpusOptions, focusPerKind * specs.length, { since: writes.midpoint });
const engineByTenant: TenantRun[] = [];
for (const spec of [specs[0]!, specs.at(-1)!]) {
  const records = writes.perTenant[spec.name] ?? 0;
  const run = await runSearches(`the engine in ${spec.name} (${records} records)`, focusWorkload.filter((q) => q.tenant === spec.name), 1, rounds, onEngine);
  engineByTenant.push({ tenant: spec.name, records, run });
}
// 4b. At a million records, the growth from 100 000 with both sides in this run (steps/growth.ts): the
// 100 000-record corpus of the same seed, written the same way on a server of its own, then the biggest
// tenant's searches of common words of both corpora's workloads, the same searches on both, round by round.
let growth: GrowthRun | undefined;
if (corpusOptions.records === 1_000_000) {
  const commonWords = (q: BenchQuery) => q.tenant === specs[0]!.name && q.kind === 'common-words';
  const options = { ...corpusOptions, records: 100_000 };
  const smaller = await writtenCorpus(options);
  smaller.client.close();
  const smallEngine = engineOn(smaller.server.dataDir, smaller.tenants);
  try {
    const queries = [...queryWorkload(options, focusPerKind * specs.length, { since: smaller.writes.midpoint }).filter(commonWords), ...focusWorkload.filter(commonWords)];
    const small = { records: smaller.writes.perTenant[specs[0]!.name] ?? 0, search: smallEngine.search };
    const big = { records: engineByTenant[0]!.records, search: onEngine };
    growth = await pairedGrowth('growth from 100 000 records, common words, biggest tenant, engine', queries, small, big, rounds * 2);
  } finally {
    smallEngine.close();
    await smaller.server.stop();
  }
}
closeEngine();
client.close();
await server.stop();

// 6. Search quality through the real write and query paths, one tenant per set.
const quality: QualityResult[] = [];
const qualityServer = await startBenchServer();
try {
  for (const set of [cranfield(), cacm(), agentMemory(), agentQuestions()]) {
    const tenant = await createTenant(qualityServer.dataDir, set.name);
    const bar = progress(`quality: ${set.name}, ${set.docs.length} documents and ${set.queries.length} queries`, 1);
    const client = new MemoryClient({ baseUrl: qualityServer.url, apiKey: tenant.api_key });
    const result = await scoreSet(set, await loadThroughApi(client, set));
    quality.push(result);
    bar.tick();
    bar.finish(`nDCG@10 ${result.ndcg10.toFixed(3)}, MAP ${result.map.toFixed(3)}, Recall@100 ${result.recall100.toFixed(3)}`);
    if (pg && peer) peer.quality.push(await scoreSet(set, await loadIntoPeer(pg, set, started.toISOString())));
  }
} finally {
  await qualityServer.stop();
  await pg?.stop();
}

// 6b. The cut-off `rank` suggests, from the agent sets, and what it keeps in every set (bench/quality/cut-off.ts):
// printed, and written into docs/api.md and docs/benchmarks.md with the rest of a full run.
const cutOff = suggestCutOff(rankAll());
note(`suggested cut-off min_rank=${cutOff.cutOff} (SUGGESTED_MIN_RANK is ${SUGGESTED_MIN_RANK}):\n${cutOffMarkdown(cutOff)}`);
if (section) for (const file of CUT_OFF_DOCS) replaceGeneratedSection(file, CUT_OFF_SECTION, cutOffMarkdown(cutOff));

// 7. Cold starts of the Lambda bundles.
const coldStarts = await measureColdStarts(note, quick ? { runs: 5, warmCalls: 200 } : {});

// 8. Searches meant to stall the server, beside other tenants' requests, on a server of their own.
const hostile = await runHostileSearches({ seconds: quick ? 5 : 30 });

const results: BenchResults = {
  date: started.toISOString(),
  mode: quick ? 'quick' : 'full',
  machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, probe },
  corpus: { ...corpusOptions, tenants: tenantsFor(corpusOptions), queriesPerKind: perKind, rounds },
  writes: writes.phases,
  searches: { http, engine, engineByTenant, floor },
  growth,
  peer,
  quality,
  coldStarts,
  hostile,
  cutOff,
  identifiers: identifierLookups(),
  goals: [],
};
results.goals = evaluateGoals(results, results.corpus.records === 1_000_000 ? smallerRun(100_000, corpusOptions.seed!) : null);

const dir = fileURLToPath(new URL('./results/', import.meta.url));
mkdirSync(dir, { recursive: true });
// <date>.json for the default run; a quick run or another corpus size says so in the name.
const suffix = quick ? '-quick' : values.records === undefined ? '' : `-${corpusOptions.records}`;
const file = join(dir, `${started.toISOString().slice(0, 10)}${suffix}.json`);
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
const markdown = markdownReport(results);
if (section) replaceGeneratedSection(docFile, section, markdown);
else process.stdout.write(markdown);
note(`wrote ${file}${section ? ` and the section "${section}" of docs/benchmarks.md` : ''}`);
for (const goal of results.goals) note(`${goal.met === null ? 'n/a ' : goal.met ? 'MET ' : 'MISSED'} ${goal.goal}: ${goal.measured}`);

/**
 * The newest full run of `records` records with this seed in bench/results, to compare a bigger run with;
 * null when there is none, or none that measured the engine per tenant.
 */
function smallerRun(records: number, seed: number): BenchResults | null {
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  const runs = readdirSync(dir)
    .filter((name) => /^\d{4}-\d{2}-\d{2}(-\d+)?\.json$/.test(name))
    .map((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as BenchResults)
    .filter((r) => r.mode === 'full' && r.corpus.records === records && r.corpus.seed === seed && r.searches.engineByTenant !== undefined)
    .sort((a, b) => a.date.localeCompare(b.date));
  return runs.at(-1) ?? null;
}

/**
 * Steps 1–2 on a bench server of its own: the corpus' tenants, and the corpus written through the API, with
 * the records waiting for the search index's merge counted on the server's file meanwhile; resolves once
 * the background classification and the merge have taken every record.
 */
async function writtenCorpus(options: CorpusOptions) {
  const server = await startBenchServer();
  const tenants = new Map<string, BenchTenant>();
  for (const spec of tenantsFor(options)) tenants.set(spec.name, await createTenant(server.dataDir, spec.name));
  note(`corpus: ${options.records} records in ${tenants.size} tenants (${tenantsFor(options).map((t) => `${t.name} ${Math.round(t.share * 100)} %`).join(', ')})`);
  const client = new BenchHttp(server.url);
  const backlogDb = new Database(join(server.dataDir, 'memory.db'), { readonly: true });
  const backlog = new SearchMerge(backlogDb);
  // One row a sample (the seqs given above the mark; nothing is deleted here), where a count of the waiting
  // rows would cost the machine more the further the merge fell behind.
  const writes = await loadCorpus(client, tenants, options, () => backlog.waitingAtMost());
  backlogDb.close();
  await classificationDrained(server.dataDir);
  await mergeDrained(server.dataDir);
  return { server, tenants, client, writes };
}

/** The engine alone on a bench server's file, in this process: SqliteSearchIndex on a connection of its own. */
function engineOn(dataDir: string, tenants: ReadonlyMap<string, BenchTenant>) {
  const adapters = openSqliteAdapters(join(dataDir, 'memory.db'));
  const index = new SqliteSearchIndex(adapters.db);
  return { search: ({ tenant, query }: BenchQuery) => index.search(tenants.get(tenant)!.tenant_id, engineQuery(query)), close: () => adapters.close() };
}

/**
 * Waits until the server's merge thread has taken every record written into the search index, so that the
 * searches are timed on the index and not on a tail (search-merge.ts); the merge runs within a second of the
 * last write.
 */
async function mergeDrained(dataDir: string): Promise<void> {
  const adapters = openSqliteAdapters(join(dataDir, 'memory.db'), { merger: () => ({ wake: () => undefined, close: async () => undefined }) });
  const merge = new SearchMerge(adapters.db);
  await drained('waiting for the search index to merge the writes', () => merge.pending());
  adapters.close();
}

/**
 * Waits until the background worker has classified every record written, so that the searches are timed
 * in a steady state rather than beside a backlog of classification work.
 */
async function classificationDrained(dataDir: string): Promise<void> {
  const adapters = openSqliteAdapters(join(dataDir, 'memory.db'));
  await drained('waiting for the background classification of the writes', () => adapters.jobs.backlog());
  adapters.close();
}

/** Waits, with a progress line, until `pending` reaches 0, looking every quarter of a second. */
async function drained(label: string, pending: () => number): Promise<void> {
  const total = pending();
  const bar = progress(label, total);
  let last = total;
  for (let n = total; n > 0; n = pending()) {
    bar.tick(last - n);
    last = n;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  bar.tick(last);
  bar.finish();
}

/**
 * PostgreSQL side by side (step 5 of docs/benchmarks.md): a server of its own, loaded with the same corpus
 * with the instants our service stamped, its indexes built and analyzed.
 */
async function loadPostgres(): Promise<PostgresPeer> {
  const peer = await startPostgres(note);
  const bar = progress(`PostgreSQL: loading ${corpusOptions.records} records`, corpusOptions.records);
  let i = 0;
  let reported = 0;
  await peer.load(
    (function* () {
      for (const { tenant, record } of generateCorpus(corpusOptions)) {
        yield { tenant, id: String(i), agent_id: record.agent_id, type: record.type, title: record.title, body: record.body, client: record.client ?? null, created_at: writes.createdAt[i++]! };
      }
    })(),
    (loaded) => {
      bar.tick(loaded - reported);
      reported = loaded;
    },
  );
  bar.finish('indexes built and analyzed');
  return peer;
}
