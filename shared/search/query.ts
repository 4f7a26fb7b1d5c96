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
 * each becomes a clause, once, however many times the query names it.
 */
export interface Clause {
  /** The terms: one for a term clause, two or more for a phrase. */
  terms: string[];
  /** How many times the query names it ("heat" in "heat heated"): its weight is multiplied by this. */
  count: number;
}

/** The clauses of a query, in a fixed order (phrases first, then terms), the order scores are summed in. */
export function clausesOf(query: TextQuery): Clause[] {
  const clauses: Clause[] = [];
  const seen = new Map<string, Clause>();
  const add = (terms: string[]) => {
    const key = terms.join(' ');
    if (terms.length === 0) return;
    const known = seen.get(key);
    if (known) {
      known.count++;
      return;
    }
    const clause = { terms, count: 1 };
    seen.set(key, clause);
    clauses.push(clause);
  };
  for (const phrase of query.phrases) add(analyze(phrase.join(' ')));
  // An identifier is a term clause whole (rare, so it weighs much) and one for each of its words.
  for (const word of query.terms) for (const term of allTerms(word)) add([term]);
  return clauses;
}
