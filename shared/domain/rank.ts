/**
 * How every search backend turns its relevance score into the `rank` of a result.
 *
 * `score` is the engine's BM25 score as a non-negative number where higher is better (the embedded
 * engine's, shared/search/scoring.ts; OpenSearch's `_score` as it is). The rank is
 * `score / (score + RANK_HALF_SCORE)`: it is 0 for no relevance, 0.5 at a score of RANK_HALF_SCORE, and
 * approaches 1 as the score grows. It is monotonic in the score, so results sorted by score have a rank
 * that never increases, and it depends on no other result, so a rank means the same thing whatever else
 * the search returned.
 *
 * RANK_HALF_SCORE = 3 is about what one word scores when it is in the title of one record of ten (IDF
 * ln(1 + 9.5/1.5) = 2.0, times 4·2.5/(4 + 1.5) for one title occurrence in a record of average length):
 * such a match reads about 0.55, a body-only match of the same word about 0.4, a record with two of the
 * query's words 0.7 and more, and a rare word's title match in a large tenant 0.8 to 0.9.
 */
export const RANK_HALF_SCORE = 3;

/** The parameters of the BM25 score (shared/search/scoring.ts has the formula). */
export interface Bm25Params {
  k1: number;
  b: number;
  /** How many body occurrences one title occurrence is worth. */
  titleWeight: number;
}

/**
 * The parameters every backend ranks with: the embedded engine, and OpenSearch's index settings and query.
 * Chosen by the best mean nDCG@10 over Cranfield, CACM, the agent-memory set and its question-shaped twin,
 * on a grid of 720 combinations (`npx tsx bench/quality/tune.ts`; the run is in
 * bench/results/ranking-grid-2026-11-25.md, the choice in docs/benchmarks.md, "Ranking parameters").
 */
export const RANKING: Bm25Params = { k1: 1.5, b: 0.4, titleWeight: 4 };

/** Maps a non-negative BM25 score to a rank in [0, 1). */
export function rankFromScore(score: number): number {
  if (!Number.isFinite(score) || score <= 0) return 0;
  return score / (score + RANK_HALF_SCORE);
}
