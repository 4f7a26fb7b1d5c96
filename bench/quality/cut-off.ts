/**
 * The cut-off `rank` suggests (shared/domain/rank.ts, SUGGESTED_MIN_RANK), derived from the agent sets,
 * and what it keeps and leaves out in every judged set. Each set is indexed in the engine in memory, with the service's
 * parsing and RANKING (the oracle tests hold the service's SQLite engine to the same scores), and each
 * query's top 10 is ranked as the service ranks it.
 *
 * The rule: the highest cut-off, in steps of 0.005, at which each agent set (what agents store and ask)
 * still keeps at least KEEP_TARGET of the relevant records its queries find in their top 10. Then, at that
 * cut-off, in every set:
 * - kept: the share of the relevant records in the top 10 that rank at or above it (recall at the cut-off,
 *   relative to the top 10 without it), per set;
 * - precision: the share of the hits kept in the top 10 that are relevant, per set;
 * - empty: the share of the queries without any relevant record that the cut-off answers with [].
 *
 * `npx tsx bench/quality/cut-off.ts` prints the figures and rewrites the generated sections of docs/api.md
 * and docs/benchmarks.md; `npm run bench` prints them. test/bench/cut-off.test.ts checks that the constant
 * and both documents quote what this computes.
 */
import { fileURLToPath } from 'node:url';
import { parseQuery } from '../../shared/domain/query-parse.js';
import { RANKING, rankFromScore } from '../../shared/domain/rank.js';
import { searchScored } from '../../shared/search/searcher.js';
import { MemoryPostingStorage } from '../../shared/search/storage.js';
import { replaceGeneratedSection } from '../support/doc-section.js';
import { filterOf, indexDocs } from './in-process.js';
import { agentMemory, agentQuestions, cacm, cranfield, type QualitySet } from './sets.js';

/** The share of the relevant records in the top 10 every set must keep at the suggested cut-off. */
export const KEEP_TARGET = 0.95;

/**
 * The sets whose queries without judgments are questions without an answer (their READMEs say so); CACM's
 * twelve unjudged queries were never judged, which is another thing, so they count nowhere.
 */
const NO_ANSWER_SETS = new Set(['agent-memory', 'agent-questions']);

/** The sets the cut-off is derived from (`suggestCutOff`). */
const CUT_OFF_SETS = new Set(['agent-memory', 'agent-questions']);

/** One query's top 10: each hit's rank and whether it is relevant (grade > 0). */
interface RankedQuery {
  answerable: boolean;
  hits: { rank: number; relevant: boolean }[];
}

/** What a cut-off keeps in one set. */
export interface SetAtCutOff {
  set: string;
  /** Relevant records in the top 10 of the answerable queries, and how many of them the cut-off keeps. */
  relevant: number;
  kept: number;
  /** Hits the cut-off keeps in those top 10, relevant or not. */
  returned: number;
  /** Queries with no relevant record, and how many of them the cut-off answers with []. */
  unanswerable: number;
  empty: number;
}

/** The suggested cut-off and the figures of every set at it. */
export interface CutOffReport {
  cutOff: number;
  sets: SetAtCutOff[];
}

/** Every query of the sets, ranked as the service ranks it. */
export function rankAll(sets: QualitySet[] = [cranfield(), cacm(), agentMemory(), agentQuestions()]): { set: string; queries: RankedQuery[] }[] {
  const storage = new MemoryPostingStorage();
  return sets.map((set) => {
    indexDocs(storage, set.name, set.docs);
    const queries = set.queries.map((query): RankedQuery => {
      const judgments = set.qrels.get(query.qid) ?? new Map<string, number>();
      const answerable = [...judgments.values()].some((g) => g > 0);
      const text = parseQuery(query.q);
      if (text === null) return { answerable, hits: [] };
      const { hits, best } = searchScored(storage, set.name, text, { k: 10, filter: filterOf(set.docs, query.filters), ranking: RANKING });
      return { answerable, hits: hits.map((h) => ({ rank: rankFromScore(h.score, best), relevant: (judgments.get(set.docs[h.doc - 1]!.id) ?? 0) > 0 })) };
    });
    return { set: set.name, queries };
  });
}

/** What `cutOff` keeps in each set. */
export function atCutOff(ranked: ReturnType<typeof rankAll>, cutOff: number): SetAtCutOff[] {
  return ranked.map(({ set, queries }) => {
    const figures: SetAtCutOff = { set, relevant: 0, kept: 0, returned: 0, unanswerable: 0, empty: 0 };
    for (const q of queries) {
      const kept = q.hits.filter((h) => h.rank >= cutOff);
      if (!q.answerable) {
        if (!NO_ANSWER_SETS.has(set)) continue;
        figures.unanswerable++;
        if (kept.length === 0) figures.empty++;
        continue;
      }
      figures.relevant += q.hits.filter((h) => h.relevant).length;
      figures.kept += kept.filter((h) => h.relevant).length;
      figures.returned += kept.length;
    }
    return figures;
  });
}

/**
 * The highest cut-off (in steps of 0.005) at which each agent set keeps KEEP_TARGET of its relevant top-10
 * records: the sets of what agents store and ask, for whom memory_recall applies it. Cranfield's and CACM's
 * long library queries are reported beside them, not held to it.
 */
export function suggestCutOff(ranked: ReturnType<typeof rankAll>): CutOffReport {
  let best = 0;
  for (let step = 1; step <= 200; step++) {
    const cutOff = step / 200;
    const agents = atCutOff(ranked, cutOff).filter((s) => CUT_OFF_SETS.has(s.set));
    if (agents.every((s) => s.relevant === 0 || s.kept >= KEEP_TARGET * s.relevant)) best = cutOff;
    else break;
  }
  return { cutOff: best, sets: atCutOff(ranked, best) };
}

const percent = (part: number, whole: number) => (whole === 0 ? 'n/a' : `${((100 * part) / whole).toFixed(1)} %`);

/** The report as the Markdown table docs/api.md and docs/benchmarks.md quote. */
export function cutOffMarkdown(report: CutOffReport): string {
  const lines = [
    `Suggested cut-off: \`min_rank=${report.cutOff}\` (SUGGESTED_MIN_RANK).`,
    '',
    '| Set | relevant in the top 10 kept (recall) | precision of the hits kept | questions without an answer answered [] |',
    '|---|---|---|---|',
  ];
  for (const s of report.sets) {
    lines.push(`| ${s.set} | ${percent(s.kept, s.relevant)} (${s.kept} of ${s.relevant}) | ${percent(s.kept, s.returned)} | ${s.unanswerable === 0 ? 'none in the set' : `${percent(s.empty, s.unanswerable)} (${s.empty} of ${s.unanswerable})`} |`);
  }
  return `${lines.join('\n')}\n`;
}

/** The section name both documents hold the table under. */
export const CUT_OFF_SECTION = 'npx tsx bench/quality/cut-off.ts';

export const DOC_FILES = ['docs/api.md', 'docs/benchmarks.md'].map((f) => fileURLToPath(new URL(`../../${f}`, import.meta.url)));

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const report = suggestCutOff(rankAll());
  const markdown = cutOffMarkdown(report);
  process.stdout.write(markdown);
  if (!process.argv.includes('--print')) for (const file of DOC_FILES) replaceGeneratedSection(file, CUT_OFF_SECTION, markdown);
}
