import type { ColdStart } from './cold-start.js';
import type { TenantSpec } from './corpus.js';
import type { QualityResult } from './quality/score.js';
import type { SearchRun } from './steps/searches.js';
import type { WritePhase } from './steps/writes.js';

/** Everything one run measured: bench/results/<date>.json. */
export interface BenchResults {
  date: string;
  mode: 'quick' | 'full';
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string };
  corpus: { records: number; seed?: number; tenants: TenantSpec[]; queriesPerKind: number; rounds: number };
  writes: WritePhase[];
  searches: { http: SearchRun[]; engine: SearchRun };
  peer: { name: string; searches: SearchRun[]; quality: QualityResult[] } | null;
  quality: QualityResult[];
  coldStarts: ColdStart[];
  goals: Goal[];
}

/** A goal of the issue, what was measured, and whether it was met (null: not measured in this run). */
export interface Goal {
  goal: string;
  measured: string;
  met: boolean | null;
}

const at = (runs: SearchRun[], concurrency: number) => runs.find((r) => r.concurrency === concurrency);
const ms = (x: number) => `${x.toFixed(2)} ms`;
const ratio = (x: number) => `${x.toFixed(2)}×`;

/** The goals of the benchmark issue, judged on this run's figures. */
export function evaluateGoals(r: BenchResults): Goal[] {
  const goals: Goal[] = [];
  const http8 = at(r.searches.http, 8)!.all;
  const http1 = at(r.searches.http, 1)!.all;
  const records = r.corpus.records;
  goals.push(
    records === 100_000
      ? { goal: 'HTTP search at 100 000 records, concurrency 8: p50 < 2 ms and p99 < 10 ms', measured: `p50 ${ms(http8.p50Ms)}, p99 ${ms(http8.p99Ms)}`, met: http8.p50Ms < 2 && http8.p99Ms < 10 }
      : { goal: 'HTTP search at 100 000 records, concurrency 8: p50 < 2 ms and p99 < 10 ms', measured: `not measured: this run has ${records} records`, met: null },
  );
  goals.push(
    records === 1_000_000
      ? { goal: 'HTTP search at 1 000 000 records: p50 < 5 ms (concurrency 8)', measured: `p50 ${ms(http8.p50Ms)}`, met: http8.p50Ms < 5 }
      : { goal: 'HTTP search at 1 000 000 records: p50 < 5 ms (concurrency 8)', measured: `not measured: this run has ${records} records`, met: null },
  );
  const overhead = http1.p50Ms / r.searches.engine.all.p50Ms;
  goals.push({ goal: 'Service overhead (HTTP p50 / engine p50, concurrency 1) < 1.5×', measured: `${ratio(overhead)} (${ms(http1.p50Ms)} / ${ms(r.searches.engine.all.p50Ms)})`, met: overhead < 1.5 });
  if (r.peer) {
    const pg8 = at(r.peer.searches, 8)!.all;
    const speedup = pg8.p50Ms / http8.p50Ms;
    goals.push({ goal: 'At least 2× faster than PostgreSQL at p50 (concurrency 8)', measured: `${ratio(speedup)} (PostgreSQL ${ms(pg8.p50Ms)}, ours ${ms(http8.p50Ms)})`, met: speedup >= 2 });
  } else {
    goals.push({ goal: 'At least 2× faster than PostgreSQL at p50 (concurrency 8)', measured: 'not measured: run with --peers', met: null });
  }
  const bestWrites = Math.max(...r.writes.map((w) => w.perSecond));
  goals.push({ goal: 'At least 3 000 durable writes per second', measured: `${bestWrites} writes/s (best concurrency)`, met: bestWrites >= 3000 });
  const cran = r.quality.find((q) => q.set === 'cranfield');
  goals.push(cran ? { goal: 'Cranfield nDCG@10 ≥ 0.41', measured: cran.ndcg10.toFixed(3), met: cran.ndcg10 >= 0.41 } : { goal: 'Cranfield nDCG@10 ≥ 0.41', measured: 'not measured', met: null });
  return goals;
}

const row = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
const header = (cells: string[]) => [row(cells), row(cells.map(() => '---'))];

/** The generated part of docs/benchmarks.md: every figure of the run, in tables. */
export function markdownReport(r: BenchResults): string {
  const lines: string[] = [];
  const peer = r.peer;
  lines.push(
    `Run of ${r.date.slice(0, 16).replace('T', ' ')} UTC (${r.mode}), on ${r.machine.cpus} × ${r.machine.cpuModel}, ${r.machine.memoryGiB} GiB, Node ${r.machine.node}.`,
    `Corpus: ${r.corpus.records} records in ${r.corpus.tenants.length} tenants (${r.corpus.tenants.map((t) => `${Math.round(t.share * 100)} %`).join(', ')}), seed ${r.corpus.seed}; ${r.corpus.queriesPerKind} searches of each kind, ${r.corpus.rounds} rounds.`,
    '',
    '### Goals',
    '',
    ...header(['Goal', 'Measured', 'Met']),
    ...r.goals.map((g) => row([g.goal, g.measured, g.met === null ? 'not measured' : g.met ? 'yes' : '**no**'])),
    '',
    '### Writes over HTTP (`POST /api/v1/record`, durable when answered)',
    '',
    ...header(['Concurrency', 'Writes', 'Writes/s', 'p50', 'p95', 'p99']),
    ...r.writes.map((w) => row([w.concurrency, w.count, w.perSecond, ms(w.p50Ms), ms(w.p95Ms), ms(w.p99Ms)])),
    '',
    '### Searches over HTTP (`GET /api/v1/query`)',
    '',
    ...header(['Concurrency', 'Searches', 'Searches/s', 'p50', 'p95', 'p99']),
    ...r.searches.http.map((s) => row([s.concurrency, s.all.count, s.all.perSecond, ms(s.all.p50Ms), ms(s.all.p95Ms), ms(s.all.p99Ms)])),
    '',
    'By kind (p50 / p99), with the engine alone in process and the service overhead (HTTP p50 at concurrency 1 over engine p50):',
    '',
    ...header(['Kind', 'HTTP c=1', 'HTTP c=8', 'HTTP c=32', 'Engine', 'Overhead', ...(peer ? ['PostgreSQL c=1', 'PostgreSQL c=8', 'PG p50 / ours (c=8)'] : [])]),
  );
  const kinds = Object.keys(r.searches.engine.byKind) as (keyof SearchRun['byKind'])[];
  const pair = (run: SearchRun | undefined, kind: keyof SearchRun['byKind']) => {
    const s = run?.byKind[kind];
    return s ? `${ms(s.p50Ms)} / ${ms(s.p99Ms)}` : '–';
  };
  for (const kind of [...kinds, 'all' as const]) {
    const get = (run: SearchRun | undefined) => (kind === 'all' ? run?.all : run?.byKind[kind]);
    const fmt = (run: SearchRun | undefined) => (kind === 'all' ? (run ? `${ms(run.all.p50Ms)} / ${ms(run.all.p99Ms)}` : '–') : pair(run, kind));
    const http1 = get(at(r.searches.http, 1));
    const eng = get(r.searches.engine);
    const cells: (string | number)[] = [kind === 'all' ? '**all**' : kind, fmt(at(r.searches.http, 1)), fmt(at(r.searches.http, 8)), fmt(at(r.searches.http, 32)), eng ? `${ms(eng.p50Ms)} / ${ms(eng.p99Ms)}` : '–', http1 && eng ? ratio(http1.p50Ms / eng.p50Ms) : '–'];
    if (peer) {
      const pg8 = get(at(peer.searches, 8));
      const ours8 = get(at(r.searches.http, 8));
      cells.push(fmt(at(peer.searches, 1)), fmt(at(peer.searches, 8)), pg8 && ours8 ? ratio(pg8.p50Ms / ours8.p50Ms) : '–');
    }
    lines.push(row(cells));
  }
  lines.push('', 'Throughput by kind, searches a second over HTTP (each kind timed on its own):', '', ...header(['Kind', 'c=1', 'c=8', 'c=32']));
  for (const kind of kinds) lines.push(row([kind, ...[1, 8, 32].map((c) => at(r.searches.http, c)?.byKind[kind]?.perSecond ?? '–')]));
  lines.push('', 'p95 by kind over HTTP:', '', ...header(['Kind', 'c=1', 'c=8', 'c=32']));
  for (const kind of kinds) lines.push(row([kind, ...[1, 8, 32].map((c) => { const s = at(r.searches.http, c)?.byKind[kind]; return s ? ms(s.p95Ms) : '–'; })]));
  if (peer) {
    lines.push('', `PostgreSQL (${peer.name}) at each concurrency, all kinds, and the ratios of our p50 and p99 to its:`, '');
    lines.push(...header(['Concurrency', 'PostgreSQL p50', 'PostgreSQL p99', 'Ours p50', 'Ours p99', 'Our p50 / PG p50', 'Our p99 / PG p99']));
    for (const concurrency of [1, 8, 32]) {
      const pg = at(peer.searches, concurrency)?.all;
      const ours = at(r.searches.http, concurrency)?.all;
      if (pg && ours) lines.push(row([concurrency, ms(pg.p50Ms), ms(pg.p99Ms), ms(ours.p50Ms), ms(ours.p99Ms), ratio(ours.p50Ms / pg.p50Ms), ratio(ours.p99Ms / pg.p99Ms)]));
    }
  }
  lines.push('', '### Search quality', '', ...header(['Set', 'Engine', 'Queries', 'nDCG@10', 'MAP', 'Recall@100', 'No-answer queries returning something']));
  for (const [engineName, results] of [['this service', r.quality], ...(peer ? [[`PostgreSQL ts_rank`, peer.quality] as const] : [])] as const) {
    for (const q of results) lines.push(row([q.set, engineName, q.queries, q.ndcg10.toFixed(3), q.map.toFixed(3), q.recall100.toFixed(3), q.noAnswer.queries === 0 ? '–' : `${q.noAnswer.returnedSomething} of ${q.noAnswer.queries}`]));
  }
  lines.push('', '### Cold start (bundled as the CDK stack bundles them)', '', ...header(['Lambda', 'Bundle', 'Load in a fresh node (median)', 'Warm handler p50', 'Warm handler p99']));
  for (const c of r.coldStarts) lines.push(row([c.name, `${Math.round(c.bytes / 1000)} kB`, `${c.loadMs.toFixed(1)} ms (of ${c.runs})`, `${c.warmHandlerUs.p50.toFixed(0)} µs`, `${c.warmHandlerUs.p99.toFixed(0)} µs`]));
  return `${lines.join('\n')}\n`;
}
