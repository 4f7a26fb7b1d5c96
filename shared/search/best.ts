import { clauseBoost, type Clause } from './query.js';
import type { Bm25Params } from './ranking.js';
import { idf, type CollectionStats } from './scoring.js';

/**
 * How much a query's words that no record of the tenant holds lower its ranks beyond their weight in the
 * bound: the bound is divided by the square of the share of the query's weight the tenant holds (below).
 */
export const HELD_SHARE_POWER = 2;

/**
 * The most a query can score in a tenant: the sum over its clauses of the clause's weight (its boost times
 * the IDF of each of its terms, as the searcher weighs it) times k1 + 1, the limit a BM25 term's score
 * approaches as its count grows, whatever the record's length and the title weight (BM25F saturates the
 * weighted count once). So every record scores less than this, and score / best is a share of what the
 * query could reach (shared/domain/rank.ts). A term the tenant has no record of (`df` 0) counts at the
 * highest IDF: a record that held it would score that much, and a query whose words the tenant mostly lacks
 * is one whose matches are weak.
 *
 * Then the bound is divided by heldShare², `heldShare` being the share of the query's weight (the IDFs of
 * its words and its phrases' words, each as often as the query names it) that the tenant holds at all. A
 * question about something no memory mentions ("what is the interest rate on the mortgage?" where no
 * record says "mortgage") has its ranks lowered again, whatever its other words match: measured on the
 * agent sets, this is what lets a cut-off answer most questions without an answer with [] while keeping
 * the relevant records (docs/benchmarks.md, "Rank and the suggested cut-off"). A query whose words the
 * tenant all holds keeps the plain bound.
 */
export function bestScore(clauses: readonly Clause[], stats: CollectionStats, df: (term: string) => number, ranking: Bm25Params): number {
  let best = 0;
  let weight = 0;
  let held = 0;
  for (const clause of clauses) {
    let clauseIdf = 0;
    for (const term of clause.terms) {
      const termIdf = idf(stats.docs, df(term));
      clauseIdf += termIdf;
      if (clause.adjacent) continue;
      weight += clause.count * termIdf;
      if (df(term) > 0) held += clause.count * termIdf;
    }
    best += clauseBoost(clause, ranking) * clauseIdf * (ranking.k1 + 1);
  }
  return held === 0 || held === weight ? best : best / (held / weight) ** HELD_SHARE_POWER;
}
