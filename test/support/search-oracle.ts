import { analyzeField, type FieldTerms } from '../../shared/search/analyzer.js';
import { MAX_FIELD_WORDS } from '../../shared/search/block.js';
import type { SearchDocument } from '../../shared/search/document.js';
import { clauseBoost, clausesOf, type TextQuery } from '../../shared/search/query.js';
import { DEFAULT_RANKING, type Bm25Params } from '../../shared/search/ranking.js';
import { clauseScore, clauseWeight, idf } from '../../shared/search/scoring.js';
import type { ScoredDoc } from '../../shared/search/top-k.js';
import { bestScore } from '../../shared/search/best.js';
import { PROXIMITY_WINDOW } from '../../shared/search/searcher.js';

/**
 * The brute-force oracle: scores every document of a tenant with the ranking function, from the raw text,
 * with no index at all. The engine's pruned top k must equal its top k, scores to the bit and ties in the
 * same order (equal scores: the higher document number first). Proximity as the engine defines it
 * (shared/search/searcher.ts `withProximity`): the best max(k, PROXIMITY_WINDOW) documents by the query's
 * words, each pair of adjacent words' phrase score added, sorted again.
 */
export function oracleSearch(
  documents: readonly SearchDocument[],
  query: TextQuery,
  k: number,
  { params = DEFAULT_RANKING, accept }: { params?: Bm25Params; accept?: (doc: number) => boolean } = {},
): ScoredDoc[] {
  const { analyzed, stats, df } = analysisOf(documents);
  const clauses = clausesOf(query).map((clause) => {
    const present = clause.terms.every((t) => df.has(t));
    const boost = clauseBoost(clause, params);
    const weight = clauseWeight(params, stats, boost * clause.terms.reduce((sum, t) => sum + idf(stats.docs, df.get(t) ?? 0), 0));
    return { terms: clause.terms, adjacent: clause.adjacent, present: present && boost > 0, weight };
  });
  // A term is counted where it stands, an identifier whole at its first word; a phrase on the words' positions.
  const occurrences = (field: FieldTerms, terms: string[]) => {
    let count = 0;
    for (let p = 0; p + terms.length <= field.terms.length; p++) if (terms.every((t, j) => field.terms[p + j] === t)) count++;
    if (terms.length === 1) count += field.wholes.filter((w) => w.term === terms[0]).length;
    return count;
  };
  const scoreOf = (d: (typeof analyzed)[number], c: (typeof clauses)[number]) =>
    c.present ? clauseScore(c.weight, occurrences(d.title, c.terms), occurrences(d.body, c.terms), d.title.terms.length, d.body.terms.length) : 0;
  const byDoc = new Map(analyzed.map((d) => [d.doc, d]));
  const scored: ScoredDoc[] = [];
  for (const d of analyzed) {
    let score = 0;
    for (const c of clauses) if (!c.adjacent) score += scoreOf(d, c);
    if (score > 0 && (!accept || accept(d.doc))) scored.push({ doc: d.doc, score });
  }
  const byScore = (a: ScoredDoc, b: ScoredDoc) => b.score - a.score || b.doc - a.doc;
  const pairs = clauses.filter((c) => c.adjacent && c.present);
  if (pairs.length === 0) return scored.sort(byScore).slice(0, k);
  const window = scored.sort(byScore).slice(0, Math.max(k, PROXIMITY_WINDOW));
  return window
    .map(({ doc, score }) => ({ doc, score: pairs.reduce((sum, c) => sum + scoreOf(byDoc.get(doc)!, c), score) }))
    .sort(byScore)
    .slice(0, k);
}

/**
 * The most the query could score in these documents (shared/search/best.ts), from the oracle's own
 * document frequencies: what an exact engine's ranks divide by, so rankFromScore(h.score, oracleBest(…)).
 */
export function oracleBest(documents: readonly SearchDocument[], query: TextQuery, params: Bm25Params = DEFAULT_RANKING): number {
  const { stats, df } = analysisOf(documents);
  return stats.docs === 0 ? 0 : bestScore(clausesOf(query), stats, (term) => df.get(term) ?? 0, params);
}

interface Analysis {
  analyzed: { doc: number; title: FieldTerms; body: FieldTerms }[];
  stats: { docs: number; titleWords: number; bodyWords: number };
  df: Map<string, number>;
}

/** Each document set's analysis, made once (a test asks many queries of one corpus): an array given here is never changed after. */
const analyses = new WeakMap<readonly SearchDocument[], Analysis>();

function analysisOf(documents: readonly SearchDocument[]): Analysis {
  const known = analyses.get(documents);
  if (known) return known;
  const analyzed = documents.map((d) => ({
    doc: d.doc,
    title: analyzeField(d.title, MAX_FIELD_WORDS),
    body: analyzeField(d.body, MAX_FIELD_WORDS),
  }));
  const stats = {
    docs: analyzed.length,
    titleWords: analyzed.reduce((s, d) => s + d.title.terms.length, 0),
    bodyWords: analyzed.reduce((s, d) => s + d.body.terms.length, 0),
  };
  const df = new Map<string, number>();
  for (const d of analyzed) for (const term of new Set([d.title, d.body].flatMap((f) => [...f.terms, ...f.wholes.map((w) => w.term)]))) df.set(term, (df.get(term) ?? 0) + 1);
  const analysis = { analyzed, stats, df };
  analyses.set(documents, analysis);
  return analysis;
}
