import { clauseBoost, type Clause } from './query.js';
import type { Bm25Params } from './ranking.js';
import { idf, type CollectionStats } from './scoring.js';

/**
 * The most a query can score in a tenant: the sum over its clauses of the clause's weight (its boost times
 * the IDF of each of its terms, as the searcher weighs it) times k1 + 1, the limit a BM25 term's score
 * approaches as its count grows, whatever the record's length and the title weight (BM25F saturates the
 * weighted count once). So every record scores less than this, and score / best is a share of what the
 * query could reach (shared/domain/rank.ts). A term the tenant has no record of (`df` 0) counts at the
 * highest IDF: a record that held it would score that much, and a query whose words the tenant mostly lacks
 * is one whose matches are weak.
 */
export function bestScore(clauses: readonly Clause[], stats: CollectionStats, df: (term: string) => number, ranking: Bm25Params): number {
  let best = 0;
  for (const clause of clauses) {
    let weight = 0;
    for (const term of clause.terms) weight += idf(stats.docs, df(term));
    best += clauseBoost(clause, ranking) * weight * (ranking.k1 + 1);
  }
  return best;
}
