/**
 * The engine benchmark: loads the benchmark corpus (bench/corpus.ts) into each search-engine design and
 * times the same text searches against all of them, in-process and single-threaded. See README.md.
 *
 *   npx tsx bench/engine/run.ts --records 1000000 --designs fts5-shared,fts5-per-tenant [--queries 30]
 *     [--rounds 5] [--seed N] [--keep-dir DIR [--reuse]] [--big-tenant NAME] [--small-tenant NAME]
 *     [--no-check] [--reference DESIGN] [--load-limit-min 20] [--json FILE]
 *
 * Steps: generate the corpus once into memory (seq = 1..N in corpus order); load each design into its own
 * directory (a progress line every 100 000 records), then close it (the WAL goes into the main file) and
 * measure its files; build the workload (workload.ts) for the biggest tenant and a small one; check that
 * the designs find the same records (every query, all matches, as sets) and how much their top k overlap;
 * run every query once per design to warm up, then `rounds` timed rounds, the designs taking turns within
 * a round. A query's latency is the median of its rounds; p50 and p99 are over the queries of a kind
 * (nearest rank: with 30 queries, p99 is the slowest query). Progress goes to stderr, the report
 * (markdown) to stdout.
 */
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_SEED, generateCorpus, type CorpusOptions } from '../corpus.js';
import { median, percentile } from '../support/stats.js';
import type { EngineDesign, EngineDoc, ScoredSeq } from './design.js';
import { DESIGNS } from './designs.js';
import { engineWorkload, TEXT_KINDS, type EngineQuery, type TextKind } from './workload.js';

const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    designs: { type: 'string', default: Object.keys(DESIGNS).join(',') },
    queries: { type: 'string', default: '30' },
    rounds: { type: 'string', default: '5' },
    seed: { type: 'string', default: String(DEFAULT_SEED) },
    'keep-dir': { type: 'string' },
    reuse: { type: 'boolean', default: false },
    'big-tenant': { type: 'string' },
    'small-tenant': { type: 'string' },
    'no-check': { type: 'boolean', default: false },
    reference: { type: 'string' },
    'load-limit-min': { type: 'string', default: '20' },
    json: { type: 'string' },
  },
  strict: true,
});

const records = Number(args.records);
const perKind = Number(args.queries);
const rounds = Number(args.rounds);
const seed = Number(args.seed);
const loadLimitMs = Number(args['load-limit-min']) * 60_000;
const designNames = args.designs.split(',').map((s) => s.trim()).filter((s) => s !== '');
for (const name of designNames) {
  if (!DESIGNS[name]) throw new Error(`unknown design "${name}"; known: ${Object.keys(DESIGNS).join(', ')}`);
}
if (args.reuse && !args['keep-dir']) throw new Error('--reuse needs --keep-dir');
const options: CorpusOptions = { records, seed };

const log = (line: string) => process.stderr.write(`${line}\n`);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n >= 1 ? n.toFixed(2) : n.toFixed(3));

// ---------------------------------------------------------------------------------------------------------
// The corpus, once, in memory.

const genStart = performance.now();
const docs: EngineDoc[] = [];
const tenantDocs = new Map<string, number>();
for (const { tenant, record } of generateCorpus(options)) {
  docs.push({ tenant, seq: docs.length + 1, title: record.title, body: record.body });
  tenantDocs.set(tenant, (tenantDocs.get(tenant) ?? 0) + 1);
}
log(`corpus: ${fmt(records)} records (seed ${seed}) generated in ${((performance.now() - genStart) / 1000).toFixed(1)} s`);
const bySize = [...tenantDocs].sort((a, b) => b[1] - a[1]);
log(`tenants: ${bySize.map(([t, n]) => `${t} ${fmt(n)}`).join(', ')}`);
const big = args['big-tenant'] ?? bySize[0]![0];
const small = args['small-tenant'] ?? ([...bySize].reverse().find(([, n]) => n <= 10_000) ?? bySize.at(-1)!)[0];
const tenants = big === small ? [big] : [big, small];
for (const t of tenants) if (!tenantDocs.has(t)) throw new Error(`no tenant "${t}" in the corpus`);

// ---------------------------------------------------------------------------------------------------------
// Loading.

interface LoadResult {
  design: string;
  records: number;
  seconds: number;
  perSecond: number;
  bytes: number;
  /** The part of `seconds` after the last insert (statistics, merges). */
  postLoadSeconds: number;
  reused: boolean;
  aborted: boolean;
}

function directoryBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += directoryBytes(path);
    else if (entry.name !== 'loaded.json') total += statSync(path).size;
  }
  return total;
}

const root = args['keep-dir'] ? resolve(args['keep-dir']) : mkdtempSync(join(tmpdir(), 'engine-bench-'));
log(`designs' files in ${root}${args['keep-dir'] ? '' : ' (removed at the end)'}`);

function loadDesign(name: string): { design: EngineDesign; load: LoadResult } {
  const dir = join(root, name);
  const marker = join(dir, 'loaded.json');
  if (args.reuse && existsSync(marker)) {
    const load = JSON.parse(readFileSync(marker, 'utf8')) as LoadResult & { seed: number };
    if (load.records === records && load.seed === seed && !load.aborted) {
      const design = DESIGNS[name]!();
      design.open(dir);
      log(`[${name}] reusing the load in ${dir} (${fmt(load.seconds)} s when it was made)`);
      return { design, load: { ...load, reused: true } };
    }
  }
  rmSync(dir, { recursive: true, force: true });
  let design = DESIGNS[name]!();
  design.open(dir);
  const started = performance.now();
  let lastMark = started;
  let lastCount = 0;
  let lastInsert = started;
  let aborted = false;
  let fed = 0;
  function* feed(): Generator<EngineDoc> {
    for (const doc of docs) {
      if ((fed & 1023) === 0 && performance.now() - started > loadLimitMs) {
        aborted = true;
        return;
      }
      fed++;
      yield doc;
    }
  }
  design.load(feed(), (loaded) => {
    const now = performance.now();
    lastInsert = now;
    if (Math.floor(loaded / 100_000) > Math.floor(lastCount / 100_000) || loaded === records) {
      const elapsed = (now - started) / 1000;
      const recent = ((loaded - lastCount) / (now - lastMark)) * 1000;
      log(`[${name}] ${fmt(loaded)}/${fmt(records)} records, ${elapsed.toFixed(1)} s, ${fmt(loaded / elapsed)} records/s (last ${fmt(loaded - lastCount)}: ${fmt(recent)}/s)`);
      lastMark = now;
      lastCount = loaded;
    }
  });
  const seconds = (performance.now() - started) / 1000;
  const postLoadSeconds = (performance.now() - lastInsert) / 1000;
  design.close();
  const bytes = directoryBytes(dir);
  const loaded = aborted ? fed : records;
  const load: LoadResult = { design: name, records: loaded, seconds, perSecond: loaded / seconds, bytes, postLoadSeconds, reused: false, aborted };
  writeFileSync(marker, JSON.stringify({ ...load, seed }));
  log(
    aborted
      ? `[${name}] load ABORTED after ${(loadLimitMs / 60_000).toFixed(0)} min: ${fmt(loaded)} records at ${fmt(load.perSecond)} records/s`
      : `[${name}] loaded in ${seconds.toFixed(1)} s (${fmt(load.perSecond)} records/s; ${postLoadSeconds.toFixed(1)} s after the last insert), ${(bytes / 2 ** 20).toFixed(0)} MiB`,
  );
  design = DESIGNS[name]!();
  design.open(dir);
  return { design, load };
}

const loaded = designNames.map(loadDesign);
const loads = loaded.map((l) => l.load);
/** The designs that searched, the reference (`--reference`, else the first) first: the others are compared to it. */
const active = loaded.filter((l) => !l.load.aborted).map((l) => l.design);
const referenceAt = args.reference ? active.findIndex((d) => d.name === args.reference) : 0;
if (referenceAt < 0) throw new Error(`--reference ${args.reference} is not among the designs that loaded`);
active.unshift(...active.splice(referenceAt, 1));

// ---------------------------------------------------------------------------------------------------------
// The workload.

const queries: EngineQuery[] = engineWorkload(options, tenants, perKind);
log(`workload: ${queries.length} queries (${perKind} per kind and tenant) on ${tenants.map((t) => `${t} (${fmt(tenantDocs.get(t)!)})`).join(' and ')}`);
for (const kind of TEXT_KINDS) {
  const examples = tenants.map((t) => queries.find((q) => q.kind === kind && q.tenant === t)?.q).filter((q) => q !== undefined);
  log(`  ${kind}: ${examples.map((q) => JSON.stringify(q)).join(', ')}`);
}

// ---------------------------------------------------------------------------------------------------------
// Check: the designs find the same records; how much their top k overlap.

const ALL = 1_000_000_000;
/** Per query: how many records match (by the first design). */
const matchCounts: number[] = queries.map(() => Number.NaN);
const agreement = new Map<string, { agree: number; total: number; example?: string }>();
if (!args['no-check'] && active.length > 0) {
  const started = performance.now();
  queries.forEach((query, i) => {
    const sets = active.map((d) => new Set(d.search(query.tenant, query.parsed, ALL).map((r) => r.seq)));
    matchCounts[i] = sets[0]!.size;
    for (let j = 1; j < active.length; j++) {
      const key = `${active[j]!.name}|${query.kind}|${query.tenant}`;
      const a = agreement.get(key) ?? { agree: 0, total: 0 };
      const same = sets[j]!.size === sets[0]!.size && [...sets[j]!].every((s) => sets[0]!.has(s));
      a.total++;
      if (same) a.agree++;
      else if (!a.example) {
        const onlyHere = [...sets[j]!].filter((s) => !sets[0]!.has(s));
        const onlyFirst = [...sets[0]!].filter((s) => !sets[j]!.has(s));
        a.example = `${JSON.stringify(query.q)} on ${query.tenant}: ${sets[0]!.size} vs ${sets[j]!.size} (only in ${active[0]!.name}: ${onlyFirst.slice(0, 5).join(' ')}; only in ${active[j]!.name}: ${onlyHere.slice(0, 5).join(' ')})`;
      }
      agreement.set(key, a);
    }
  });
  log(`check: every query's full match set compared in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  for (const [key, a] of agreement) {
    const [design, kind, tenant] = key.split('|');
    log(`  ${design} vs ${active[0]!.name}, ${kind} on ${tenant}: same matches on ${a.agree}/${a.total} queries${a.example ? `; e.g. ${a.example}` : ''}`);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Timing.

const results: ScoredSeq[][][] = active.map(() => queries.map(() => []));
{
  const started = performance.now();
  active.forEach((d, j) => queries.forEach((q, i) => (results[j]![i] = d.search(q.tenant, q.parsed, q.k))));
  log(`warm-up: ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
/** times[design][query][round], ms. */
const times: number[][][] = active.map(() => queries.map(() => []));
for (let r = 0; r < rounds; r++) {
  const started = performance.now();
  active.forEach((d, j) => {
    queries.forEach((q, i) => {
      const t = performance.now();
      d.search(q.tenant, q.parsed, q.k);
      times[j]![i]!.push(performance.now() - t);
    });
  });
  log(`round ${r + 1}/${rounds}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
for (const d of active) d.close();
if (!args['keep-dir']) rmSync(root, { recursive: true, force: true });

// ---------------------------------------------------------------------------------------------------------
// The report.

interface Cell {
  p50: number;
  p99: number;
  mean: number;
}
const cell = (j: number, kind: TextKind, tenant: string): Cell | null => {
  const perQuery = queries.flatMap((q, i) => (q.kind === kind && q.tenant === tenant ? [median(times[j]![i]!)] : []));
  if (perQuery.length === 0) return null;
  const sorted = perQuery.sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), mean: sorted.reduce((a, b) => a + b, 0) / sorted.length };
};
/** Mean share of the reference design's top k that the design's top k holds too. */
const overlap = (j: number, kind: TextKind, tenant: string): number => {
  const shares = queries.flatMap((q, i) => {
    if (q.kind !== kind || q.tenant !== tenant) return [];
    const ref = results[0]![i]!;
    if (ref.length === 0) return [results[j]![i]!.length === 0 ? 1 : 0];
    const mine = new Set(results[j]![i]!.map((r) => r.seq));
    return [ref.filter((r) => mine.has(r.seq)).length / ref.length];
  });
  return shares.reduce((a, b) => a + b, 0) / Math.max(1, shares.length);
};
/** How many of the kind's queries get the very same top k, in the same order, as from the reference. */
const identical = (j: number, kind: TextKind, tenant: string): string => {
  let same = 0;
  let total = 0;
  queries.forEach((q, i) => {
    if (q.kind !== kind || q.tenant !== tenant) return;
    total++;
    const ref = results[0]![i]!;
    const mine = results[j]![i]!;
    if (ref.length === mine.length && ref.every((r, x) => r.seq === mine[x]!.seq)) same++;
  });
  return `${same}/${total}`;
};

const sqliteVersion = (new Database(':memory:').prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
const out: string[] = [];
out.push(`### Engine benchmark, ${fmt(records)} records`);
out.push('');
out.push(
  `${new Date().toISOString().slice(0, 10)}; ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; ` +
    `Node ${process.version}, SQLite ${sqliteVersion}; seed ${seed}; ${perKind} queries per kind and tenant, ${rounds} timed rounds after a warm-up.`,
);
out.push('');
out.push(`\`npx tsx bench/engine/run.ts ${process.argv.slice(2).join(' ')}\``);
out.push('');
out.push('| design | load (s) | records/s | of which after the last insert (s) | size (MiB) | bytes/record |');
out.push('|---|--:|--:|--:|--:|--:|');
for (const l of loads) {
  out.push(
    `| ${l.design}${l.reused ? ' (reused)' : ''}${l.aborted ? ` (ABORTED at ${fmt(l.records)})` : ''} | ${l.seconds.toFixed(1)} | ${fmt(l.perSecond)} | ${l.postLoadSeconds.toFixed(1)} | ${(l.bytes / 2 ** 20).toFixed(0)} | ${fmt(l.bytes / l.records)} |`,
  );
}
out.push('');
out.push('Search latency in ms, in-process, one thread: p50 / p99 over the queries of a kind (each query: the median of its rounds).');
out.push('');
out.push(`| kind | tenant (records) | median matches | ${active.map((d) => `${d.name} p50 / p99`).join(' | ')} |`);
out.push(`|---|---|--:|${active.map(() => '--:|').join('')}`);
for (const kind of TEXT_KINDS) {
  for (const tenant of tenants) {
    const counts = queries.flatMap((q, i) => (q.kind === kind && q.tenant === tenant ? [matchCounts[i]!] : []));
    if (counts.length === 0) continue;
    const m = median(counts);
    const cells = active.map((_, j) => {
      const c = cell(j, kind, tenant)!;
      return `${ms(c.p50)} / ${ms(c.p99)}`;
    });
    out.push(`| ${kind} | ${tenant} (${fmt(tenantDocs.get(tenant)!)}) | ${Number.isNaN(m) ? '–' : fmt(m)} | ${cells.join(' | ')} |`);
  }
}
if (active.length > 1) {
  out.push('');
  out.push(
    `Agreement with ${active[0]!.name}, per design: top-k overlap (mean share of its top k also in the design's top k), ` +
      'queries with the identical top k in the same order, and queries with the same full set of matches.',
  );
  out.push('');
  out.push(`| kind | tenant | ${active.slice(1).map((d) => `${d.name}: overlap, identical, same matches`).join(' | ')} |`);
  out.push(`|---|---|${active.slice(1).map(() => '--:|').join('')}`);
  for (const kind of TEXT_KINDS) {
    for (const tenant of tenants) {
      if (!queries.some((q) => q.kind === kind && q.tenant === tenant)) continue;
      const cells = active.slice(1).map((d, j) => {
        const a = agreement.get(`${d.name}|${kind}|${tenant}`);
        return `${(overlap(j + 1, kind, tenant) * 100).toFixed(0)} %, ${identical(j + 1, kind, tenant)}, ${a ? `${a.agree}/${a.total}` : '–'}`;
      });
      out.push(`| ${kind} | ${tenant} | ${cells.join(' | ')} |`);
    }
  }
}
process.stdout.write(`${out.join('\n')}\n`);

if (args.json) {
  const report = {
    date: new Date().toISOString(),
    records,
    seed,
    perKind,
    rounds,
    tenants: Object.fromEntries(tenants.map((t) => [t, tenantDocs.get(t)])),
    loads,
    search: active.flatMap((d, j) =>
      TEXT_KINDS.flatMap((kind) => tenants.map((tenant) => ({ design: d.name, kind, tenant, ...cell(j, kind, tenant) }))),
    ),
    queries: queries.map((q, i) => ({
      kind: q.kind,
      tenant: q.tenant,
      q: q.q,
      k: q.k,
      matches: matchCounts[i],
      ms: Object.fromEntries(active.map((d, j) => [d.name, median(times[j]![i]!)])),
    })),
  };
  writeFileSync(args.json, JSON.stringify(report, null, 2));
}
