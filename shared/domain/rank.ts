/**
 * How every search backend turns its relevance score into the `rank` of a result, so that a rank means the
 * same in every search of a tenant (docs/api.md, "Rank").
 *
 * `score` is the backend's BM25 score (the embedded engine's, shared/search/scoring.ts; OpenSearch's
 * `_score`), and `best` is the most that query could score at all: for each of its clauses (a word, or a
 * phrase), the IDF of its terms times the saturation limit k1 + 1 (times the clause's weight), which BM25
 * approaches only as the clause fills a record (shared/search/best.ts; OpenSearch's in its adapter). A
 * word the tenant never used counts at the highest IDF, since a record holding it would score that much,
 * and the bound is then divided by the square of the share of the query's weight the tenant holds, so a
 * question about something no record mentions ranks low whatever its other words match.
 * The rank is `score / best`: the share of the query's possible score a record reaches. It is in [0, 1),
 * monotonic in the score within a search, and it does not grow with the number of words a query has, so
 * a rank of 0.4 is as good a match for a one-word query as for a ten-word question. A record that holds
 * one of the query's words once in its title scores about 0.65 of that word's share, once in its body 0.3.
 */

/** The parameters of the BM25 score (shared/search/scoring.ts has the formula). */
export interface Bm25Params {
  k1: number;
  b: number;
  /** How many body occurrences one title occurrence is worth. */
  titleWeight: number;
  /** What a pair of the query's words weighs, as a phrase, where a record holds them next to each other, in order (shared/search/query.ts). */
  proximity: number;
}

/**
 * The parameters every backend ranks with: the embedded engine, and OpenSearch's index settings and query.
 * Chosen on a grid of 2 880 combinations of k1, b, the title weight and proximity's weight over Cranfield,
 * CACM, the agent-memory set and its question-shaped twin: of the combinations that reach every floor the
 * recall issue set (nDCG@10 Cranfield 0.41, CACM 0.512, agent-memory 0.65, agent-questions 0.75), the one of
 * the best mean (`npx tsx bench/quality/tune.ts --proximity 0,0.15,0.25,0.4 --floors …`; the run is in
 * bench/results/ranking-grid-2026-11-26.md, the choice in docs/benchmarks.md, "Ranking parameters").
 */
export const RANKING: Bm25Params = { k1: 2.2, b: 0.7, titleWeight: 4, proximity: 0.25 };

/**
 * The rank of a record that scores `score` for a query that could score `best` at most: score / best, 0
 * when either is not a positive number, at most 1.
 */
export function rankFromScore(score: number, best: number): number {
  if (!Number.isFinite(score) || score <= 0 || !Number.isFinite(best) || best <= 0) return 0;
  return Math.min(1, score / best);
}

/**
 * Whether a search can answer nothing but `[]`: without text every hit ranks 0, so a `min_rank` above 0
 * leaves every one out (decisions.md). Each search adapter asks it before reading anything.
 */
export function cutsEveryHit(query: { text: unknown; min_rank?: number | undefined }): boolean {
  return query.text === null && (query.min_rank ?? 0) > 0;
}

/**
 * The `min_rank` the judged sets suggest, and MCP's memory_recall applies unless the agent gives one: the
 * highest cut-off (in steps of 0.005) at which each agent set (agent-memory, agent-questions) keeps at
 * least 95 % of the relevant records its queries find in their top 10 (bench/quality/cut-off.ts;
 * docs/api.md, "Rank", has what it keeps and leaves out in every set). test/bench/cut-off.test.ts checks it
 * is what the script derives.
 */
export const SUGGESTED_MIN_RANK = 0.045;
