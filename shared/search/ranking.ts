/**
 * The engine's ranking configuration. Whoever uses the engine passes its own (the service passes the
 * domain's RANKING, shared/domain/rank.ts, which OpenSearch ranks with too), as Lucene's IndexWriterConfig
 * and IndexSearcher are given a Similarity: the writer keeps each block's impacts for the title weight it
 * is given (metas.ts), and the searcher scores with the parameters it is given (scoring.ts).
 */

/** The parameters of the BM25F score (scoring.ts has the formula). */
export interface Bm25Params {
  k1: number;
  b: number;
  /** How many body occurrences one title occurrence is worth. */
  titleWeight: number;
  /**
   * What two words that stand next to each other in the query weigh, as a phrase, against the two words
   * apart (query.ts `clausesOf`): 0 leaves proximity out, 1 weighs the pair as much as a quoted phrase.
   */
  proximity: number;
}

/**
 * What the engine ranks with when it is given nothing (the oracle tests, the engine benchmark): the
 * parameters the tuning grid chose (docs/benchmarks.md, "Ranking parameters"), the same as the service's.
 */
export const DEFAULT_RANKING: Readonly<Bm25Params> = Object.freeze({ k1: 2.2, b: 0.7, titleWeight: 4, proximity: 0.25 });
