/**
 * The ranking function, written down once: the searcher, its upper bounds and the test oracle all score
 * with these functions, so a pruned search and an exhaustive one agree to the bit.
 *
 * BM25 over a document of two fields, with the fields weighed before saturation (BM25F, as FTS5's bm25()
 * weighs its columns): a clause that occurs tfT times in the title and tfB times in the body counts
 *   tf = titleWeight · tfT + tfB
 * in a document of weighted length dl = titleWeight · lenT + lenB, and scores
 *   idf · tf · (k1 + 1) / (tf + k1 · (1 − b + b · dl / avgdl)).
 * The IDF is Lucene's, ln(1 + (N − n + 0.5) / (n + 0.5)): positive for every word, however common, where
 * the classic form (FTS5's) goes negative and is clamped to a near-zero constant. N, n and avgdl are the
 * tenant's own: no other tenant's records move a rank. k1, b and the title weight are the caller's
 * (ranking.ts).
 */
import type { Bm25Params } from './ranking.js';

/** The tenant's statistics a score needs. */
export interface CollectionStats {
  /** Documents in the tenant. */
  docs: number;
  /** Title words over all its documents. */
  titleWords: number;
  /** Body words over all its documents. */
  bodyWords: number;
}

/** Lucene's BM25 IDF: ln(1 + (N − n + 0.5) / (n + 0.5)); > 0 for every n ≤ N. */
export function idf(docs: number, df: number): number {
  return Math.log(1 + (docs - df + 0.5) / (df + 0.5));
}

/** The per-query constants of one clause's score: its IDF and the collection's weighted average length. */
export interface ClauseWeight {
  idf: number;
  k1: number;
  b: number;
  titleWeight: number;
  avgLength: number;
  /** idf · (k1 + 1), k1 · (1 − b) and k1 · b / avgdl: the score without its division (`surelyBelow`). */
  top: number;
  norm: number;
  perWord: number;
}

/** The weight of a clause with this IDF in this collection. */
export function clauseWeight(params: Bm25Params, stats: CollectionStats, clauseIdf: number): ClauseWeight {
  const avgLength = stats.docs === 0 ? 1 : (params.titleWeight * stats.titleWords + stats.bodyWords) / stats.docs;
  const { k1, b, titleWeight } = params;
  const avg = Math.max(avgLength, 1e-9);
  return { idf: clauseIdf, k1, b, titleWeight, avgLength: avg, top: clauseIdf * (k1 + 1), norm: k1 * (1 - b), perWord: (k1 * b) / avg };
}

/**
 * One clause's score in one document: tfT/tfB are its occurrences in title and body, lenT/lenB the
 * document's field lengths in words. Increasing in tfT and tfB, decreasing in lenT and lenB, which is
 * what makes `clauseScore(maxTfT, maxTfB, minLenT, minLenB)` an upper bound over a block.
 */
export function clauseScore(w: ClauseWeight, tfT: number, tfB: number, lenT: number, lenB: number): number {
  const tf = w.titleWeight * tfT + tfB;
  if (tf === 0) return 0;
  const dl = w.titleWeight * lenT + lenB;
  return (w.idf * tf * (w.k1 + 1)) / (tf + w.k1 * (1 - w.b + (w.b * dl) / w.avgLength));
}

/**
 * Whether clauseScore(w, tfT, tfB, lenT, lenB) is below `floor`, without its division: score < floor exactly
 * when idf · (k1 + 1) · tf < floor · (tf + k1 · (1 − b + b · dl / avgdl)), the denominator being positive.
 * The two sides round apart from clauseScore by some 1e-16 of their size, so it may answer either way for
 * a score within that of `floor`: a caller that prunes by it gives a floor lower than its threshold by more.
 */
export function surelyBelow(w: ClauseWeight, tfT: number, tfB: number, lenT: number, lenB: number, floor: number): boolean {
  return surelyBelowOf(w.titleWeight, w.top, w.norm, w.perWord, tfT, tfB, lenT, lenB, floor);
}

/** surelyBelow with the weight's constants given one by one, for a loop that reads them once (searcher.ts `nextAbove`). */
export function surelyBelowOf(titleWeight: number, top: number, norm: number, perWord: number, tfT: number, tfB: number, lenT: number, lenB: number, floor: number): boolean {
  const tf = titleWeight * tfT + tfB;
  return top * tf < floor * (tf + norm + perWord * (titleWeight * lenT + lenB));
}
