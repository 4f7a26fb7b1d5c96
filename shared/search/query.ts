import { allTerms, analyze } from './analyzer.js';

/**
 * A query as the engine reads it: its words and phrases, made into clauses. The searcher scores the
 * clauses (searcher.ts) and the cost bound counts what reading them costs (cost.ts).
 */

/** What to look for: words (any of them) and phrases (each word in order), as the query parser gives them. */
export interface TextQuery {
  terms: readonly string[];
  phrases: readonly (readonly string[])[];
}

/**
 * A clause of the query as the index reads it: a term, or a phrase of terms. Each word of the query's
 * terms may analyze to more than one term ("e-mail"; the identifier "inv-42" is "inv-42", "inv" and "42");
 * each becomes a clause, once, however many times the query names it. Each two words that follow one
 * another among the query's terms are also a phrase clause, `adjacent`: a record that holds them next to
 * each other, in order ("deploy freeze", "Priya Sharma"), scores that phrase on top of the two words, so it
 * ranks above one that holds them apart. Such a pair weighs the ranking's `proximity` times a phrase.
 */
export interface Clause {
  /** The terms: one for a term clause, two or more for a phrase. */
  terms: string[];
  /** How many times the query names it ("heat" in "heat heated"): its weight is multiplied by this. */
  count: number;
  /** Whether it is a pair of the query's words, not a phrase the query quotes: its weight is also multiplied by `proximity`. */
  adjacent: boolean;
}

/** What a clause's weight (the sum of its terms' IDFs) is multiplied by, in a search that ranks with `ranking`. */
export function clauseBoost(clause: Clause, ranking: { proximity: number }): number {
  return clause.adjacent ? clause.count * ranking.proximity : clause.count;
}

/** The clauses of a query, in a fixed order (phrases, terms, then adjacent pairs), the order scores are summed in. */
export function clausesOf(query: TextQuery): Clause[] {
  const clauses: Clause[] = [];
  const seen = new Map<string, Clause>();
  const add = (terms: string[], adjacent: boolean) => {
    const key = `${adjacent ? '~' : ''}${terms.join(' ')}`;
    if (terms.length === 0) return;
    const known = seen.get(key);
    if (known) {
      known.count++;
      return;
    }
    const clause = { terms, count: 1, adjacent };
    seen.set(key, clause);
    clauses.push(clause);
  };
  for (const phrase of query.phrases) add(analyze(phrase.join(' ')), false);
  // An identifier is a term clause whole (rare, so it weighs much) and one for each of its words.
  for (const word of query.terms) for (const term of allTerms(word)) add([term], false);
  // Two words of the query one after the other, as the phrase of their terms (an identifier in its words).
  for (const [first, second] of adjacentPairs(query.terms)) add(analyze(`${first} ${second}`), true);
  return clauses;
}

/**
 * The query's words two by two, as they follow one another (the parser has dropped the stop words between
 * them): what proximity ranks, on the embedded engine (`clausesOf`) and on OpenSearch (its adapter's query).
 * A word next to itself, or to another form of itself ("heat heated"), is no pair: naming a word twice
 * weighs it twice already.
 */
export function adjacentPairs(terms: readonly string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < terms.length; i++) {
    const [first, second] = [terms[i]!, terms[i + 1]!];
    if (analyze(first).join(' ') !== analyze(second).join(' ')) pairs.push([first, second]);
  }
  return pairs;
}
