import { blockMostPositions, blockPositionCount } from './block.js';
import { positionsBound, positionsPerDocumentBound } from './metas.js';
import type { Clause } from './query.js';
import type { PostingStorage, TermHead } from './storage.js';
import type { Tail } from './tail.js';

/**
 * What a search costs, in one place: the bound the search pool decides where to run a search by
 * (`searchCost`), and the costs by which a filter clause is read one way or another (filter.ts). A search
 * costs the postings it reads and scores, a filter the documents it passes.
 */

/**
 * What checking one position of a phrase's word costs, in postings read and scored: a position is a 16-bit
 * number compared in a merge of two sorted lists (postings.ts), a posting is decoded, scored and offered to
 * the top k. Measured on 20 000 documents of 200 Zipf-distributed words (two-word queries, k 20): 23-126 ns
 * a posting for the words as terms, 1-11 ns a position for the same words as a phrase.
 */
export const POSITION_COST = 1 / 8;

/**
 * An upper bound on what a search of `clauses` reads in one tenant, in postings and positions, from the
 * terms' heads and block metas alone (no block is read, no tail position copied):
 * - a term clause reads at most its term's postings (its document frequency, index and tail), and asks the
 *   filters about no more documents than that;
 * - a phrase reads each of its words' postings and, for the documents that hold them all, their positions:
 *   matching a phrase in a document costs about the sum of its words' positions there (postings.ts), so
 *   the bound adds, for each word of the phrase (a word the phrase repeats, each time), all the positions
 *   the term has: the tail's exactly, the open block's from its size, the sealed blocks' from their metas
 *   (each block's count times its largest counts).
 * - a pair of adjacent words (query.ts) is read at the best `window` documents only (searcher.ts
 *   `withProximity`), each of its words once per document: for each word, `window` (or its document
 *   frequency, when smaller) times the most positions one document holds, from the same sources.
 * The sum is in postings, a position counting POSITION_COST of one. Once it passes `limit` it stops and
 * returns what it has (more than `limit`), so the estimate itself costs no more than about `limit` /
 * BLOCK_SIZE metas: the caller only needs to know it is too much.
 */
export function searchCost(storage: PostingStorage, tenant: string, clauses: readonly Clause[], tail: Tail, limit = Infinity, window = MAX_PROXIMITY_WINDOW): number {
  const upTo = storage.mergedUpTo();
  // Each term's head, and its postings and positions in the tail above the term's part of the index.
  const terms = new Map<string, { head: TermHead | null; tail: { postings: number; positions: number } }>();
  for (const clause of clauses) {
    for (const term of clause.terms) {
      if (terms.has(term)) continue;
      const head = storage.head(tenant, term);
      terms.set(term, { head, tail: tail.count(term, Math.max(upTo, head?.merged ?? 0)) });
    }
  }
  let cost = 0;
  for (const { head, tail } of terms.values()) cost += (head?.df ?? 0) + tail.postings;
  if (cost > limit) return cost;
  // A term's sealed blocks' metas, read once however many phrases and pairs name it.
  const metas = new Map<string, Uint8Array | null>();
  const metasOf = (term: string, head: TermHead | null) => {
    if (!metas.has(term)) metas.set(term, head && head.sealedLast > 0 ? storage.metas(tenant, term) : null);
    return metas.get(term)!;
  };
  const positions = new Map<string, number>();
  const perDocument = new Map<string, number>();
  for (const clause of clauses) {
    if (clause.terms.length < 2) continue;
    if (clause.adjacent) {
      for (const term of clause.terms) {
        if (perDocument.has(term)) continue;
        const { head, tail } = terms.get(term)!;
        const sealed = metasOf(term, head);
        // The tail's documents by their positions all together: it keeps no count per document.
        const most = Math.max(sealed ? positionsPerDocumentBound(sealed) : 0, head ? blockMostPositions(head.open) : 0, tail.positions);
        perDocument.set(term, most);
        cost += Math.min(window, (head?.df ?? 0) + tail.postings) * most * POSITION_COST;
        if (cost > limit) return cost;
      }
      continue;
    }
    for (const term of clause.terms) {
      let p = positions.get(term);
      if (p === undefined) {
        const { head, tail } = terms.get(term)!;
        const sealed = metasOf(term, head);
        p = (sealed ? positionsBound(sealed) : 0) + (head ? blockPositionCount(head.open) : 0) + tail.positions;
        positions.set(term, p);
      }
      cost += p * POSITION_COST;
      if (cost > limit) return cost;
    }
  }
  return cost;
}

/** The most documents proximity ranks again (searcher.ts PROXIMITY_WINDOW, up to a search's largest k). */
export const MAX_PROXIMITY_WINDOW = 100;

/**
 * What reading one clause at one given document costs, in postings walked: the documents of its block are
 * decoded (cursor.ts `scoreOf`), and documents far apart fall in different blocks. Measured at a million
 * records, an agent of 10 000 records leading a search of two common words (270 000 postings): 3.8 ms with
 * its list's read, where walking the postings took 13.4 ms, so a clause read at a document cost about what
 * 4 postings walked do (docs/benchmarks.md). A filter that lists fewer documents than the clauses'
 * postings over this leads the search (`filterLeadMost`).
 */
export const CLAUSE_AT_DOCUMENT_COST = 8;

/** How many candidates are checked one by one before a filter's cost is estimated from them. */
export const FILTER_SAMPLE = 64;

/**
 * The most documents a filter, by the estimate from its first FILTER_SAMPLE candidates, may pass for its
 * list to be read whole: reading an agent's records from their SQLite index costs about 0.2 µs each (1 ms
 * for 6 500, 18 ms for 80 000 in a 500 000-record tenant), and a filter that passes more rejects few of the
 * candidates, so checking them one by one then costs less.
 */
export const FILTER_LIST_MAX = 16_384;

/** The most documents a filter lists before a search to lead it (an agent of at most this many records). */
export const FILTER_LEAD_MAX = FILTER_LIST_MAX;

/**
 * The most documents of a filter's list one search over at most `postings` postings reads: the lead's try
 * (filterLeadMost + 1 at most, for one clause, the most it tries) and the list read whole (FILTER_LIST_MAX +
 * 1 at most), each of which stops one past its bound (filter.ts). It grows with `postings`, so a bound of
 * the postings gives a bound of the reads. (A lead's try of FILTER_LIST_MAX that found more is not followed
 * by the other read, which this does not count on.)
 */
export function filterListReadMost(postings: number): number {
  const lead = filterLeadMost(postings, 1);
  return (lead > 0 ? lead + 1 : 0) + FILTER_LIST_MAX + 1;
}

/**
 * The most documents for which reading `clauses` clauses at each costs less than walking their `postings`
 * (CLAUSE_AT_DOCUMENT_COST), and FILTER_LEAD_MAX at most: a filter that lists no more leads the search.
 * 0 or less when no filter would.
 */
export function filterLeadMost(postings: number, clauses: number): number {
  return Math.min(Math.ceil(postings / (clauses * CLAUSE_AT_DOCUMENT_COST)) - 1, FILTER_LEAD_MAX);
}

/**
 * The most documents a filter leaves out by a list read before the search (Filter.excluded: a tenant's
 * superseded records, read from their partial index at about 0.15 µs each, so 0.6 ms at most); a tenant
 * that has more has them left out by the filter's own check, one candidate at a time (a probe of that
 * index). Measured in a 50 000-record tenant, four one- and two-word searches: 1 024 superseded records
 * left out by their list cost 0.15 ms to read and the searches 5 ms each; by the check, 13 ms each, as
 * every candidate that would enter the top k is then a statement.
 */
export const FILTER_EXCLUDED_MAX = 4096;
