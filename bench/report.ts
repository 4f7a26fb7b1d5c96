import type { ColdStart } from './cold-start.js';
import type { TenantSpec } from './corpus.js';
import type { CutOffReport } from './quality/cut-off.js';
import type { IdentifierLookups } from './quality/identifiers.js';
import type { QualityResult } from './quality/score.js';
import type { GrowthRun } from './steps/growth.js';
import type { HostileRun } from './steps/hostile.js';
import type { SearchRun } from './steps/searches.js';
import type { WritePhase } from './steps/writes.js';
import { median, type LatencyStats } from './support/stats.js';
import { probeSentence, type MachineProbe } from './support/machine-probe.js';

/** Everything one run measured: bench/results/<date>.json. */
export interface BenchResults {
  date: string;
  mode: 'quick' | 'full';
  /** `probe`: what the machine did at the run's start (absent in runs made before it was measured). */
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string; probe?: MachineProbe };
  corpus: { records: number; seed?: number; tenants: TenantSpec[]; queriesPerKind: number; rounds: number };
  writes: WritePhase[];
  /**
   * `engine` is the whole workload on the engine in process; `engineByTenant` the biggest tenant and the
   * smallest, each with searches of every kind of its own (absent in runs made before it was measured);
   * `floor` the HTTP searches again, answered by a server that does nothing else (support/http-floor.ts;
   * absent in runs made before it was measured).
   */
  searches: { http: SearchRun[]; engine: SearchRun; engineByTenant?: TenantRun[]; floor?: SearchRun[] };
  peer: { name: string; searches: SearchRun[]; quality: QualityResult[] } | null;
  quality: QualityResult[];
  coldStarts: ColdStart[];
  /**
   * At a million records, the growth from 100 000 with both corpora in this run (steps/growth.ts; absent in
   * runs made before it was measured, and in runs of other sizes).
   */
  growth?: GrowthRun;
  /** Searches meant to stall the server, beside other tenants' requests (absent in runs made before it was measured). */
  hostile?: HostileRun;
  /** The suggested cut-off and what it keeps in each judged set (absent in runs made before it was measured). */
  cutOff?: CutOffReport;
  /** Identifier lookups in the agent sets (absent in runs made before they were measured). */
  identifiers?: IdentifierLookups;
  goals: Goal[];
}

/** The engine's searches in one tenant, alone, in process. */
export interface TenantRun {
  tenant: string;
  records: number;
  run: SearchRun;
}

/** A goal of the issue, what was measured, and whether it was met (null: not measured in this run). */
export interface Goal {
  goal: string;
  measured: string;
  met: boolean | null;
}

const at = (runs: SearchRun[], concurrency: number) => runs.find((r) => r.concurrency === concurrency);
/** A run's latencies for one kind, or over every kind ('all'). */
const ofKind = (run: SearchRun | undefined, kind: keyof SearchRun['byKind'] | 'all') => (kind === 'all' ? run?.all : run?.byKind[kind]);
const ms = (x: number) => `${x.toFixed(2)} ms`;
const ratio = (x: number) => `${x.toFixed(2)}×`;

/** A goal that this run cannot judge, and why. */
const unmeasured = (goal: string, why: string): Goal => ({ goal, measured: `not measured: ${why}`, met: null });

/**
 * The goals of the recall-engine issue (14), judged on this run's figures. `smaller` is the newest full run
 * of 100 000 records with the same seed, which a run of 1 000 000 is compared with for growth.
 */
export function evaluateGoals(r: BenchResults, smaller: BenchResults | null = null): Goal[] {
  const goals: Goal[] = [];
  const http8 = at(r.searches.http, 8)!.all;
  const http1 = at(r.searches.http, 1)!;
  const records = r.corpus.records;
  const [big, small] = r.searches.engineByTenant ?? [];
  const worstKind = (run: SearchRun, p: 'p50Ms' | 'p99Ms') =>
    Object.entries(run.byKind).reduce((worst, [kind, s]) => (s[p] > worst.value ? { kind, value: s[p] } : worst), { kind: '–', value: 0 });

  let goal = 'Engine in process, 1 000 000 records, biggest tenant, every kind: p50 ≤ 5 ms, p99 ≤ 25 ms';
  if (records !== 1_000_000) goals.push(unmeasured(goal, `this run has ${records} records`));
  else if (!big) goals.push(unmeasured(goal, 'no per-tenant engine run'));
  else {
    const p50 = worstKind(big.run, 'p50Ms');
    const p99 = worstKind(big.run, 'p99Ms');
    goals.push({ goal, measured: `worst p50 ${ms(p50.value)} (${p50.kind}), worst p99 ${ms(p99.value)} (${p99.kind}), in ${big.records} records`, met: p50.value <= 5 && p99.value <= 25 });
  }

  goal = 'HTTP at 1 000 000 records, concurrency 8: p50 ≤ 20 ms, p99 < 100 ms';
  goals.push(records === 1_000_000 ? { goal, measured: `p50 ${ms(http8.p50Ms)}, p99 ${ms(http8.p99Ms)}`, met: http8.p50Ms <= 20 && http8.p99Ms < 100 } : unmeasured(goal, `this run has ${records} records`));

  goal = 'HTTP at concurrency 8, same run as PostgreSQL: p50 at least 2× faster, p99 better, no kind slower (p50)';
  if (r.peer) {
    const pg8run = at(r.peer.searches, 8)!;
    const pg8 = pg8run.all;
    // Each kind's p50 against PostgreSQL's for the same searches: the ones where ours is the slower, with
    // the HTTP floor's p50 for the kind, which says whether any service behind HTTP could be faster.
    const floor8 = r.searches.floor && at(r.searches.floor, 8);
    const slower = Object.entries(at(r.searches.http, 8)!.byKind).flatMap(([kind, ours]) => {
      const theirs = pg8run.byKind[kind as keyof SearchRun['byKind']];
      if (!theirs || ours.p50Ms <= theirs.p50Ms) return [];
      const floor = floor8?.byKind[kind as keyof SearchRun['byKind']];
      const beside = floor ? ` (PostgreSQL ${ms(theirs.p50Ms)}, ours ${ms(ours.p50Ms)}, the HTTP floor ${ms(floor.p50Ms)})` : '';
      return [`${kind} ${ratio(theirs.p50Ms / ours.p50Ms)}${beside}`];
    });
    goals.push({
      goal,
      measured:
        `p50 ${ratio(pg8.p50Ms / http8.p50Ms)} faster (PostgreSQL ${ms(pg8.p50Ms)}, ours ${ms(http8.p50Ms)}); p99 PostgreSQL ${ms(pg8.p99Ms)}, ours ${ms(http8.p99Ms)}; ` +
        (slower.length === 0 ? 'no kind slower' : `slower: ${slower.join(', ')}`),
      met: pg8.p50Ms >= 2 * http8.p50Ms && http8.p99Ms < pg8.p99Ms && slower.length === 0,
    });
  } else goals.push(unmeasured(goal, 'run with --peers'));

  goal = 'Small tenant (≤ 10 000 records), engine: p50 ≤ 0.5 ms';
  if (!small) goals.push(unmeasured(goal, 'no per-tenant engine run'));
  else {
    const p50 = worstKind(small.run, 'p50Ms');
    goals.push({ goal, measured: `p50 ${ms(small.run.all.p50Ms)} over every kind in ${small.records} records (worst kind ${p50.kind}, ${ms(p50.value)})`, met: small.records <= 10_000 && small.run.all.p50Ms <= 0.5 });
  }

  goal = 'Service overhead at concurrency 1, every kind: HTTP p50 ≤ engine p50 + 0.5 ms';
  const overheads = Object.entries(r.searches.engine.byKind).map(([kind, e]) => ({ kind, value: (http1.byKind[kind as keyof SearchRun['byKind']]?.p50Ms ?? Number.NaN) - e.p50Ms }));
  const worst = overheads.reduce((w, o) => (!(o.value <= w.value) ? o : w), { kind: '–', value: -Infinity });
  goals.push({ goal, measured: `largest: ${ms(worst.value)} (${worst.kind}); over all kinds ${ms(http1.all.p50Ms - r.searches.engine.all.p50Ms)}`, met: worst.value <= 0.5 });

  goal = 'Growth from 100 000 to 1 000 000 records, common words, biggest tenant, engine p50: under 3×';
  const bigThen = smaller?.searches.engineByTenant?.[0]?.run.byKind['common-words'];
  const bigNow = big?.run.byKind['common-words'];
  if (records !== 1_000_000) goals.push(unmeasured(goal, `this run has ${records} records`));
  else if (r.growth) {
    // Both sides in this run, round by round: the median of the rounds' ratios.
    const { small: s, big: b, ratios, searches } = r.growth;
    const growth = median(ratios);
    const which = searches === undefined ? 'each its own searches' : `the same ${searches} searches`;
    goals.push({ goal, measured: `${ratio(growth)}, both in this run, ${which} (${ms(s.p50Ms)} → ${ms(b.p50Ms)}; the median of ${ratios.length} rounds' ratios, ${ratio(Math.min(...ratios))} to ${ratio(Math.max(...ratios))})`, met: growth < 3 });
  } else if (!bigThen || !bigNow) goals.push(unmeasured(goal, 'no full 100 000-record run with the same seed in bench/results'));
  else goals.push({ goal, measured: `${ratio(bigNow.p50Ms / bigThen.p50Ms)} (${ms(bigThen.p50Ms)} → ${ms(bigNow.p50Ms)}, run of ${smaller!.date.slice(0, 10)})`, met: bigNow.p50Ms < 3 * bigThen.p50Ms });

  // The recall issue's floors, each beside the value when it was filed (run of 2026-11-25).
  for (const [set, floor, before] of [['cranfield', 0.41, 0.401], ['cacm', 0.51, 0.512], ['agent-memory', 0.65, 0.63], ['agent-questions', 0.75, 0.713]] as const) {
    const q = r.quality.find((x) => x.set === set);
    goal = `${set} nDCG@10 ≥ ${floor.toFixed(2)} (${before.toFixed(3)} on 2026-11-25)`;
    goals.push(q ? { goal, measured: q.ndcg10.toFixed(3), met: q.ndcg10 >= floor && q.ndcg10 >= before } : unmeasured(goal, 'not in this run'));
  }

  goal = 'At the suggested cut-off, each agent set: ≥ 95 % of its relevant top-10 records kept, ≥ 60 % of its questions without an answer answered []';
  const agents = r.cutOff?.sets.filter((s) => s.set.startsWith('agent-')) ?? [];
  if (agents.length === 0) goals.push(unmeasured(goal, 'not in this run'));
  else {
    const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)} %`;
    goals.push({
      goal,
      measured: `min_rank ${r.cutOff!.cutOff}: ${agents.map((s) => `${s.set} ${pct(s.kept, s.relevant)} kept, ${s.empty} of ${s.unanswerable} []`).join('; ')}`,
      met: agents.every((s) => s.kept >= 0.95 * s.relevant && s.empty >= 0.6 * s.unanswerable),
    });
  }

  goal = 'Identifier lookups: the record holding the exact identifier first, for every identifier query of the agent sets';
  const ids = r.identifiers;
  goals.push(ids ? { goal, measured: `${ids.first} of ${ids.queries}${ids.missed.length > 0 ? ` (missed: ${ids.missed.join('; ')})` : ''}`, met: ids.first === ids.queries } : unmeasured(goal, 'not in this run'));

  goal = 'Beside 4 clients of stalling searches (1 000-word phrases over 64 KB bodies of one word, 5 000-word queries): other tenants\' get, search and write p99 ≤ 50 ms';
  const h = r.hostile;
  if (!h) goals.push(unmeasured(goal, 'not in this run'));
  else {
    const worstOp = (['get', 'search', 'write'] as const).reduce((w, op) => (h.underLoad[op].p99Ms > h.underLoad[w].p99Ms ? op : w), 'get' as 'get' | 'search' | 'write');
    goals.push({ goal, measured: `p99 get ${ms(h.underLoad.get.p99Ms)}, search ${ms(h.underLoad.search.p99Ms)}, write ${ms(h.underLoad.write.p99Ms)} (alone: ${ms(h.calm[worstOp].p99Ms)} for ${worstOp})`, met: Math.max(h.underLoad.get.p99Ms, h.underLoad.search.p99Ms, h.underLoad.write.p99Ms) <= 50 });
  }
  goal = 'Each stalling search ends within its deadline, with 200 or 503';
  if (!h) goals.push(unmeasured(goal, 'not in this run'));
  else {
    const other = Object.entries(h.hostile.statuses).filter(([status]) => status !== '200' && !status.startsWith('503')).reduce((n, [, c]) => n + c, 0);
    goals.push({ goal, measured: `${h.hostile.count} searches: ${Object.entries(h.hostile.statuses).map(([status, c]) => `${c} × ${status}`).join(', ')}; longest ${ms(h.hostile.maxMs)} (deadline ${ms(h.deadlineMs)})`, met: other === 0 && h.hostile.late === 0 });
  }

  goal = 'Durable writes at concurrency 32: at least 3 000 a second';
  const c32 = r.writes.find((w) => w.concurrency === 32);
  const quarters = c32?.mergeBacklogByQuarter ? ` (the most in each quarter of the phase: ${c32.mergeBacklogByQuarter.join(', ')})` : '';
  const kept = c32?.maxMergeBacklog == null ? '' : `; at most ${c32.maxMergeBacklog} records waited for the search index's merge${quarters}`;
  goals.push(c32 ? { goal, measured: `${c32.perSecond} writes/s${kept}`, met: c32.perSecond >= 3000 } : unmeasured(goal, 'no phase at concurrency 32'));
  return goals;
}

/** A phase's most records waiting for the merge, then the most in each quarter of it where the run kept them. */
const backlogCell = (w: WritePhase) => `${w.maxMergeBacklog}${w.mergeBacklogByQuarter ? ` (quarters: ${w.mergeBacklogByQuarter.join(', ')})` : ''}`;

const row = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
const header = (cells: string[]) => [row(cells), row(cells.map(() => '---'))];

/** The generated part of docs/benchmarks.md: every figure of the run, in tables. */
export function markdownReport(r: BenchResults): string {
  const lines: string[] = [];
  const peer = r.peer;
  lines.push(
    `Run of ${r.date.slice(0, 16).replace('T', ' ')} UTC (${r.mode}), on ${r.machine.cpus} × ${r.machine.cpuModel}, ${r.machine.memoryGiB} GiB, Node ${r.machine.node}.`,
    ...(r.machine.probe ? [probeSentence(r.machine.probe)] : []),
    `Corpus: ${r.corpus.records} records in ${r.corpus.tenants.length} tenants (${r.corpus.tenants.map((t) => `${Math.round(t.share * 100)} %`).join(', ')}), seed ${r.corpus.seed}; ${r.corpus.queriesPerKind} searches of each kind, ${r.corpus.rounds} rounds.`,
    '',
    '### Goals',
    '',
    ...header(['Goal', 'Measured', 'Met']),
    ...r.goals.map((g) => row([g.goal, g.measured, g.met === null ? 'not measured' : g.met ? 'yes' : '**no**'])),
    '',
    '### Writes over HTTP (`POST /api/v1/record`, durable when answered)',
    '',
    ...header(['Concurrency', 'Writes', 'Writes/s', 'p50', 'p95', 'p99', 'Merge backlog (most)']),
    ...r.writes.map((w) => row([w.concurrency, w.count, w.perSecond, ms(w.p50Ms), ms(w.p95Ms), ms(w.p99Ms), w.maxMergeBacklog == null ? '—' : backlogCell(w)])),
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
  const pair = (s: LatencyStats | undefined) => (s ? `${ms(s.p50Ms)} / ${ms(s.p99Ms)}` : '–');
  for (const kind of [...kinds, 'all' as const]) {
    const get = (run: SearchRun | undefined) => ofKind(run, kind);
    const fmt = (run: SearchRun | undefined) => pair(get(run));
    const http1 = get(at(r.searches.http, 1));
    const eng = get(r.searches.engine);
    const cells: (string | number)[] = [kind === 'all' ? '**all**' : kind, fmt(at(r.searches.http, 1)), fmt(at(r.searches.http, 8)), fmt(at(r.searches.http, 32)), pair(eng), http1 && eng ? ratio(http1.p50Ms / eng.p50Ms) : '–'];
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
  const floor = r.searches.floor;
  if (floor) {
    lines.push(
      '',
      'The HTTP floor (p50): the same searches, answered with the same bodies by a bare node:http server in a process of its own that does nothing else; ' +
        "what HTTP alone costs beside this load generator, so ours less the floor is the service's own time" +
        (peer ? ". PostgreSQL is asked on its own wire protocol, without HTTP, so a kind where it is under the floor is one no service behind HTTP can match" : '') +
        ':',
      '',
      ...header(['Kind', 'Floor c=1', 'Floor c=8', 'Floor c=32', 'Ours − floor, c=1', 'Ours − floor, c=8', ...(peer ? ['PostgreSQL c=8'] : [])]),
    );
    for (const kind of [...kinds, 'all' as const]) {
      const p50 = (runs: SearchRun[] | undefined, c: number) => ofKind(runs && at(runs, c), kind)?.p50Ms;
      const cell = (x: number | undefined) => (x === undefined ? '–' : ms(x));
      const over = (c: number) => {
        const [ours, bare] = [p50(r.searches.http, c), p50(floor, c)];
        return ours === undefined || bare === undefined ? '–' : ms(ours - bare);
      };
      lines.push(row([kind === 'all' ? '**all**' : kind, cell(p50(floor, 1)), cell(p50(floor, 8)), cell(p50(floor, 32)), over(1), over(8), ...(peer ? [cell(p50(peer.searches, 8))] : [])]));
    }
  }
  if (r.searches.engineByTenant) {
    const [big, small] = r.searches.engineByTenant;
    lines.push('', 'The engine alone in process, in the biggest tenant and the smallest, each with searches of every kind of its own (p50 / p99):', '');
    lines.push(...header(['Kind', ...r.searches.engineByTenant.map((t) => `${t.tenant} (${t.records} records)`)]));
    for (const kind of [...Object.keys(big!.run.byKind), 'all'] as (keyof SearchRun['byKind'] | 'all')[]) {
      const cell = (t: TenantRun | undefined) => {
        const s = kind === 'all' ? t?.run.all : t?.run.byKind[kind];
        return s ? `${ms(s.p50Ms)} / ${ms(s.p99Ms)}` : '–';
      };
      lines.push(row([kind === 'all' ? '**all**' : kind, cell(big), cell(small)]));
    }
  }
  lines.push('', '### Search quality', '', ...header(['Set', 'Engine', 'Queries', 'nDCG@10', 'MAP', 'Recall@100', 'No-answer queries returning something']));
  for (const [engineName, results] of [['this service', r.quality], ...(peer ? [[`PostgreSQL ts_rank`, peer.quality] as const] : [])] as const) {
    for (const q of results) lines.push(row([q.set, engineName, q.queries, q.ndcg10.toFixed(3), q.map.toFixed(3), q.recall100.toFixed(3), q.noAnswer.queries === 0 ? '–' : `${q.noAnswer.returnedSomething} of ${q.noAnswer.queries}`]));
  }
  if (r.hostile) {
    const h = r.hostile;
    lines.push(
      '',
      `### Searches meant to stall the server`,
      '',
      `${h.clients} clients send a hostile tenant's worst searches without pause for ${h.seconds} s (a quoted phrase of 1 000 words, and a query of 5 000 words, over ${h.records} records whose 64 KB body is one word repeated), while the gets, searches and writes of two ordinary tenants run, one at a time each; the same requests ran ${h.seconds} s alone first.`,
      '',
      ...header(['Other tenants\' requests', 'Alone: p50 / p99', 'Beside the stalling searches: p50 / p99', 'Requests (alone / beside)']),
      ...(['get', 'search', 'write'] as const).map((op) => row([op, `${ms(h.calm[op].p50Ms)} / ${ms(h.calm[op].p99Ms)}`, `${ms(h.underLoad[op].p50Ms)} / ${ms(h.underLoad[op].p99Ms)}`, `${h.calm[op].count} / ${h.underLoad[op].count}`])),
      '',
      `The stalling searches: ${h.hostile.count}, ${Object.entries(h.hostile.statuses).map(([status, c]) => `${c} answered ${status}`).join(', ')}; p50 ${ms(h.hostile.p50Ms)}, p99 ${ms(h.hostile.p99Ms)}, longest ${ms(h.hostile.maxMs)}, against a deadline of ${ms(h.deadlineMs)}.`,
    );
  }
  lines.push('', '### Cold start (bundled as the CDK stack bundles them)', '', ...header(['Lambda', 'Bundle', 'Load in a fresh node (median)', 'Warm handler p50', 'Warm handler p99']));
  for (const c of r.coldStarts) lines.push(row([c.name, `${Math.round(c.bytes / 1000)} kB`, `${c.loadMs.toFixed(1)} ms (of ${c.runs})`, `${c.warmHandlerUs.p50.toFixed(0)} µs`, `${c.warmHandlerUs.p99.toFixed(0)} µs`]));
  return `${lines.join('\n')}\n`;
}
