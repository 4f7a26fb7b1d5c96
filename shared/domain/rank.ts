/**
 * How every search backend turns its relevance score into the `rank` of a result.
 *
 * `score` is the engine's BM25 score as a non-negative number where higher is better (SQLite FTS5's
 * `bm25()` negated; OpenSearch's `_score` as it is). The rank is `score / (score + RANK_HALF_SCORE)`:
 * it is 0 for no relevance, 0.5 at a score of RANK_HALF_SCORE, and approaches 1 as the score grows. It is
 * monotonic in the score, so results sorted by score have a rank that never increases, and it depends on
 * no other result, so a rank means the same thing whatever else the search returned.
 */
export const RANK_HALF_SCORE = 10;

/** Maps a non-negative BM25 score to a rank in [0, 1). */
export function rankFromScore(score: number): number {
  if (!Number.isFinite(score) || score <= 0) return 0;
  return score / (score + RANK_HALF_SCORE);
}
