/**
 * The ranking parameters, tuned in-process: every quality set indexed once into a MemoryPostingStorage, every
 * query run through the service's own parser (`parseQuery`) and the engine's search (`searchIndex`, k = 100,
 * the query's filters as its filter clause), over a grid of BM25F parameters and, optionally, query transforms that
 * drop words from the parsed query before the search (the index is never changed).
 *
 * One index per set serves every combination: the writer stores each posting's raw term frequencies and
 * field lengths (title and body apart) and the tenant's raw word counts (writer.ts), and k1, b and
 * titleWeight are applied only when a search scores (scoring.ts `clauseWeight`/`clauseScore`, called from
 * searcher.ts with `options.ranking`).
 *
 *   npx tsx bench/quality/tune.ts                      # the full grid, queries parsed as the service parses them
 *   npx tsx bench/quality/tune.ts --transforms none,all-words  # also every word of the query, for comparison
 *   npx tsx bench/quality/tune.ts --quick              # a 3×3×3 grid, to try the script
 *   npx tsx bench/quality/tune.ts --workers 2          # the grid split over N worker processes (default 1)
 *   npx tsx bench/quality/tune.ts --proximity 0,0.15   # proximity's weight too (default: RANKING's only)
 *   npx tsx bench/quality/tune.ts --floors cranfield=0.41,cacm=0.51  # also the combinations reaching every floor
 *
 * The figures are nDCG@10 (graded for the agent sets, binary for Cranfield and CACM) and Recall@100, each
 * the mean over the set's queries that have a relevant document (metrics.ts `summarize`, as score.ts uses it).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseQuery } from '../../shared/domain/query-parse.js';
import { RANKING, type Bm25Params } from '../../shared/domain/rank.js';
import type { TextQuery } from '../../shared/search/query.js';
import { searchIndex } from '../../shared/search/searcher.js';
import { MemoryPostingStorage } from '../../shared/search/storage.js';
import { summarize, type Judgments } from './metrics.js';
import { allWordsQuery } from './query-transforms.js';
import { filterOf, indexDocs } from './in-process.js';
import { agentMemory, agentQuestions, cacm, cranfield, type QualityDoc, type QualityQuery, type QualitySet } from './sets.js';

interface Transform {
  name: string;
  note: string;
  apply: (q: string) => TextQuery;
}

const parsed = (q: string): TextQuery => parseQuery(q) ?? { terms: [], phrases: [] };

const TRANSFORMS: Transform[] = [
  { name: 'none', note: "parseQuery's result as the service uses it (stop words and, when other words remain, function words dropped)", apply: parsed },
  { name: 'all-words', note: 'for comparison: every free word kept, no stop list at all', apply: allWordsQuery },
];

// ---------------------------------------------------------------------------------------------------------
// The grid.

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const workers = args.includes('--workers') ? Number(args[args.indexOf('--workers') + 1]) : 1;
/** By default only `none`, the service's own parsing; `all-words` is a comparison. */
const only = args.includes('--transforms') ? args[args.indexOf('--transforms') + 1]!.split(',') : ['none'];
const transforms = TRANSFORMS.filter((t) => only.includes(t.name));
if (transforms.length === 0) throw new Error(`no such transform: ${only}; there are ${TRANSFORMS.map((t) => t.name).join(', ')}`);

const K1 = quick ? [0.9, 1.2, 1.5] : [0.5, 0.75, 0.9, 1.0, 1.2, 1.5, 1.8, 2.2];
const B = quick ? [0.5, 0.75, 0.9] : [0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9, 1.0];
const TW = quick ? [2, 4, 8] : [1, 1.5, 2, 3, 4, 5, 6, 8, 10, 15];
/** The nDCG@10 each set must reach: `--floors cranfield=0.41,cacm=0.51` lists the combinations that reach them all. */
const floors = new Map(
  (args.includes('--floors') ? args[args.indexOf('--floors') + 1]!.split(',') : []).map((f) => {
    const [set, value] = f.split('=');
    return [set!, Number(value)] as const;
  }),
);
/** Proximity's weight: today's only, unless `--proximity 0,0.15,0.5` asks for several. */
const PROXIMITY = args.includes('--proximity') ? args[args.indexOf('--proximity') + 1]!.split(',').map(Number) : [RANKING.proximity];
const GRID: Bm25Params[] = K1.flatMap((k1) => B.flatMap((b) => TW.flatMap((titleWeight) => PROXIMITY.map((proximity) => ({ k1, b, titleWeight, proximity })))));
const keyOf = (p: Bm25Params) => `${p.k1}/${p.b}/${p.titleWeight}/${p.proximity}`;
const TODAY = keyOf(RANKING);

// ---------------------------------------------------------------------------------------------------------
// The sets, indexed once each.

const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)}s`;
const progress = (line: string) => {
  if (!process.env.TUNE_SLICE) process.stderr.write(`[${elapsed()}] ${line}\n`);
};

interface Prepared {
  set: QualitySet;
  tenant: string;
  docs: QualityDoc[];
  /** Per transform, per query: the index into `distinct` of the text query it searches with. */
  use: number[][];
  /** The distinct (query, text query) pairs to run: several transforms often give the same text query. */
  distinct: { query: QualityQuery; text: TextQuery }[];
}

const storage = new MemoryPostingStorage();
const SETS = [cranfield(), cacm(), agentMemory(), agentQuestions()];
const prepared: Prepared[] = SETS.map((set) => {
  const tenant = set.name;
  indexDocs(storage, tenant, set.docs);
  const distinct: Prepared['distinct'] = [];
  const seen = new Map<string, number>();
  const use = transforms.map((t) =>
    set.queries.map((query) => {
      const text = t.apply(query.q);
      const key = `${query.qid}\0${JSON.stringify(text)}`;
      let i = seen.get(key);
      if (i === undefined) {
        seen.set(key, (i = distinct.length));
        distinct.push({ query, text });
      }
      return i;
    }),
  );
  progress(`indexed ${set.name}: ${set.docs.length} docs, ${set.queries.length} queries (${set.queries.filter((q) => [...(set.qrels.get(q.qid)?.values() ?? [])].some((g) => g > 0)).length} judged), ${distinct.length} distinct searches over ${transforms.length} transform(s)`);
  return { set, tenant, docs: set.docs, use, distinct };
});

// ---------------------------------------------------------------------------------------------------------
// The runs: results[transform][set][combo] = { ndcg10, recall100 }.

interface Figures {
  ndcg10: number;
  recall100: number;
}
const results: Figures[][][] = transforms.map(() => prepared.map(() => new Array<Figures>(GRID.length)));
const noAnswerReturned: number[][] = transforms.map(() => prepared.map(() => 0));
const searchesPerCombo = prepared.reduce((s, p) => s + p.distinct.length, 0);

/** One combination's figures, per transform and set, and at today's parameters the no-answer counts. */
interface ComboResult {
  c: number;
  figures: Figures[][];
  noAnswer?: number[][];
}

function runCombo(c: number): ComboResult {
  const params = GRID[c]!;
  const figures: Figures[][] = transforms.map(() => []);
  const noAnswer: number[][] = transforms.map(() => []);
  for (const [si, p] of prepared.entries()) {
    const rankings = p.distinct.map(({ query, text }) => {
      const hits = searchIndex(storage, p.tenant, text, { k: 100, filter: filterOf(p.docs, query.filters), ranking: params });
      return hits.map((h) => p.docs[h.doc - 1]!.id);
    });
    for (const [ti] of transforms.entries()) {
      const runs = p.set.queries.map((query, qi) => ({ ranking: rankings[p.use[ti]![qi]!]!, judgments: (p.set.qrels.get(query.qid) ?? new Map<string, number>()) as Judgments }));
      const summary = summarize(runs);
      figures[ti]![si] = { ndcg10: summary.ndcg10, recall100: summary.recall100 };
      noAnswer[ti]![si] = runs.filter((r) => ![...r.judgments.values()].some((g) => g > 0) && r.ranking.length > 0).length;
    }
  }
  return keyOf(params) === TODAY ? { c, figures, noAnswer } : { c, figures };
}

const slice = process.env.TUNE_SLICE?.split('/').map(Number);
if (slice) {
  // A worker: its share of the grid, one message per combination, then done.
  for (let c = slice[0]!; c < GRID.length; c += slice[1]!) process.send!(runCombo(c));
  process.disconnect();
} else {
  let done = 0;
  let lastReport = 0;
  const record = (r: ComboResult) => {
    r.figures.forEach((bySet, ti) => bySet.forEach((f, si) => (results[ti]![si]![r.c] = f)));
    if (r.noAnswer) r.noAnswer.forEach((bySet, ti) => bySet.forEach((n, si) => (noAnswerReturned[ti]![si] = n)));
    done++;
    if (performance.now() - lastReport > 5000 || done === GRID.length) {
      lastReport = performance.now();
      const p = GRID[r.c]!;
      progress(`${done}/${GRID.length} combinations (last k1=${p.k1} b=${p.b} tw=${p.titleWeight} proximity=${p.proximity}), ${done * searchesPerCombo} searches`);
    }
  };
  if (workers <= 1) {
    for (let c = 0; c < GRID.length; c++) record(runCombo(c));
  } else {
    progress(`running the grid on ${workers} worker processes`);
    await Promise.all(
      Array.from({ length: workers }, (_, i) =>
        new Promise<void>((resolve, reject) => {
          const child = fork(fileURLToPath(import.meta.url), process.argv.slice(2), { env: { ...process.env, TUNE_SLICE: `${i}/${workers}` }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
          child.on('message', (m) => record(m as ComboResult));
          child.on('error', reject);
          child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`worker ${i} exited with ${code}`))));
        }),
      ),
    );
  }
}
const searches = searchesPerCombo * GRID.length;

// ---------------------------------------------------------------------------------------------------------
// The report.

if (!slice) report();

function report(): void {
const f3 = (x: number) => x.toFixed(3);
const names = prepared.map((p) => p.set.name);
const ALL4 = names.map((_, i) => i);
const ALL3 = names.flatMap((n, i) => (n === 'agent-questions' ? [] : [i]));
const meanOf = (ti: number, sets: number[], c: number) => sets.reduce((s, si) => s + results[ti]![si]![c]!.ndcg10, 0) / sets.length;
const todayIndex = GRID.findIndex((p) => keyOf(p) === TODAY);
const out: string[] = [];
const print = (line = '') => out.push(line);
const header = (cols: string[]) => {
  print(`| ${cols.join(' | ')} |`);
  print(`|${cols.map(() => '---').join('|')}|`);
};
const row = (cols: (string | number)[]) => print(`| ${cols.join(' | ')} |`);
const setCols = (ti: number, c: number) => names.map((_, si) => f3(results[ti]![si]![c]!.ndcg10));

print(`# Ranking grid: ${GRID.length} combinations (k1 ${K1.join(',')}; b ${B.join(',')}; titleWeight ${TW.join(',')})`);
print();
print('Transforms:');
for (const t of transforms) print(`- **${t.name}**: ${t.note}`);
print();

print(`## nDCG@10 (Recall@100) at today's RANKING ${TODAY}`);
print();
header(['transform', ...names, 'mean of 4', 'mean of 3', 'queries without a relevant doc that returned something']);
for (const [ti, t] of transforms.entries()) {
  if (todayIndex < 0) break;
  row([t.name, ...names.map((_, si) => `${f3(results[ti]![si]![todayIndex]!.ndcg10)} (${f3(results[ti]![si]![todayIndex]!.recall100)})`), f3(meanOf(ti, ALL4, todayIndex)), f3(meanOf(ti, ALL3, todayIndex)), names.map((n, si) => `${n} ${noAnswerReturned[ti]![si]}`).join(', ')]);
}
print();

for (const [label, sets] of [
  ['mean of 4 sets', ALL4],
  ['mean of 3 sets (without agent-questions)', ALL3],
] as const) {
  print(`## Best by ${label}, per transform`);
  print();
  header(['transform', 'k1/b/tw', ...names, 'mean', 'mean at today', 'combos within 0.005', 'within 0.01']);
  for (const [ti, t] of transforms.entries()) {
    const order = GRID.map((_, c) => c).sort((x, y) => meanOf(ti, sets, y) - meanOf(ti, sets, x));
    const best = order[0]!;
    const top = meanOf(ti, sets, best);
    const ties = order.filter((c) => meanOf(ti, sets, c) === top).length;
    row([
      t.name,
      keyOf(GRID[best]!) + (ties > 1 ? ` (tied with ${ties - 1})` : ''),
      ...setCols(ti, best),
      f3(top),
      todayIndex < 0 ? '-' : f3(meanOf(ti, sets, todayIndex)),
      order.filter((c) => meanOf(ti, sets, c) >= top - 0.005).length,
      order.filter((c) => meanOf(ti, sets, c) >= top - 0.01).length,
    ]);
  }
  print();
}

/** Each set's own best, per transform: what a set would pick alone. */
print('## Each set alone: its best combination and nDCG@10, per transform');
print();
header(['transform', ...names]);
for (const [ti, t] of transforms.entries()) {
  row([
    t.name,
    ...names.map((_, si) => {
      const best = GRID.map((_, c) => c).reduce((x, y) => (results[ti]![si]![y]!.ndcg10 > results[ti]![si]![x]!.ndcg10 ? y : x));
      return `${f3(results[ti]![si]![best]!.ndcg10)} @ ${keyOf(GRID[best]!)}`;
    }),
  ]);
}
print();

for (const [ti, t] of transforms.entries()) {
  const order = GRID.map((_, c) => c).sort((x, y) => meanOf(ti, ALL4, y) - meanOf(ti, ALL4, x));
  print(`## Transform ${t.name}: top 10 by mean of 4`);
  print();
  header(['k1/b/tw', ...names, 'mean of 4', 'mean of 3', 'Recall@100 mean of 4']);
  for (const c of order.slice(0, 10)) {
    row([keyOf(GRID[c]!), ...setCols(ti, c), f3(meanOf(ti, ALL4, c)), f3(meanOf(ti, ALL3, c)), f3(ALL4.reduce((s, si) => s + results[ti]![si]![c]!.recall100, 0) / 4)]);
  }
  print();
  // How flat the optimum is: the mean of 4 as each parameter moves alone from the best.
  const best = GRID[order[0]!]!;
  print(`Around the best (${keyOf(best)}), mean of 4 as one parameter moves, the others held:`);
  print();
  for (const [axis, values] of [
    ['k1', K1],
    ['b', B],
    ['titleWeight', TW],
  ] as const) {
    const cells = values.map((v) => {
      const c = GRID.findIndex((p) => keyOf(p) === keyOf({ ...best, [axis]: v }));
      const m = f3(meanOf(ti, ALL4, c));
      return v === best[axis] ? `**${v}: ${m}**` : `${v}: ${m}`;
    });
    print(`- ${axis}: ${cells.join(', ')}`);
  }
  print();
  if (floors.size > 0) {
    const meeting = order.filter((c) => names.every((n, si) => results[ti]![si]![c]!.ndcg10 >= (floors.get(n) ?? 0)));
    print(`Combinations at or above every floor (${[...floors].map(([n, f]) => `${n} ${f}`).join(', ')}): ${meeting.length}`);
    print();
    if (meeting.length > 0) {
      header(['k1/b/tw/proximity', ...names, 'mean of 4']);
      for (const c of meeting.slice(0, 10)) row([keyOf(GRID[c]!), ...setCols(ti, c), f3(meanOf(ti, ALL4, c))]);
      print();
    }
  }
}

print(`Runtime: ${elapsed()} (${searches} searches).`);
console.log(out.join('\n'));
}
