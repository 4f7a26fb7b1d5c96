import { FILTER_LIST_MAX, FILTER_SAMPLE, filterLeadMost } from './cost.js';
import { lowerBound } from './postings.js';

/**
 * A filter clause, as a clause of Lucene's BooleanQuery with Occur.FILTER: it decides which documents a
 * search may return and adds nothing to their scores. Whoever holds what the filter is about (the SQLite
 * adapter: the record filters) gives the ways it can be read, each at its own cost, as a Lucene query gives
 * a ScorerSupplier; the engine decides which to use (FilterClause), as Lucene's IndexOrDocValuesQuery
 * decides between its index, which lists the documents, and its doc values, which check one at a time.
 */
export interface Filter {
  /** Whether the document passes; asked about documents in increasing order. */
  matches(doc: number): boolean;
  /** Whether a document in [from, to] may pass: false only when none does. Without it, any may. */
  mayMatchIn?(from: number, to: number): boolean;
  /** The documents the filter passes only among, when an index of their own lists them (an agent's records). */
  list?: FilterList;
  /**
   * Documents the filter never passes, whatever `matches` and `list` say, in increasing order: a few, known
   * before the search (a tenant's superseded records), so that leaving them out costs no lookup.
   */
  excluded?: Uint32Array;
}

/** Documents a filter passes only among, listed from an index of their own. */
export interface FilterList {
  /** The documents in increasing order if there are at most `most`, else null; reads at most `most + 1`. */
  atMost(most: number): Uint32Array | null;
  /** Whether the filter passes every listed document, so that a listed document needs no `matches`. */
  exact: boolean;
}

/**
 * A filter in one search, read the way that costs least (cost.ts has the costs):
 * - Before the search, a filter that can list its documents leads when it lists few: reading each clause
 *   at each of them is then less work than walking the clauses' postings (`lead`), as Lucene leads a
 *   conjunction with its cheapest clause.
 * - Otherwise a candidate is checked only when it would enter the top k (`accepts`). After FILTER_SAMPLE
 *   checks, the filter's cost (Lucene's `cost()`: the documents it passes) is estimated from the share that
 *   passed; a filter estimated at most FILTER_LIST_MAX documents is then listed, and its list answers for
 *   it. The list is read up to FILTER_LIST_MAX + 1 documents whatever the estimate said: one that has more
 *   (the first candidates were not a fair sample) is not listed, and its candidates are checked one by one
 *   as before, so a search reads at most filterListReadMost documents of a filter's list (cost.ts).
 * - A window of documents is skipped when the filter passes none of them (`mayAcceptIn`).
 * - The documents it excludes by name (`excluded`) never pass, before any of the above is asked.
 */
export class FilterClause {
  private asked = 0;
  private passed = 0;
  /**
   * Whether the list is to be read whole: undecided until FILTER_SAMPLE candidates were checked, and false
   * once a read found it longer than FILTER_LIST_MAX.
   */
  private listWhole: boolean | null = null;
  /** The filter's list, once read. */
  private listed: Uint32Array | null = null;

  /** `docs` is how many documents the tenant has, in the index and the tail. */
  constructor(
    private readonly filter: Filter,
    private readonly docs: number,
  ) {}

  /**
   * The filter's documents, to score only those, when reading `clauses` clauses at each of them costs less
   * than walking the clauses' `postings`; else null.
   */
  lead(postings: number, clauses: number): Uint32Array | null {
    const list = this.filter.list;
    if (!list) return null;
    const most = filterLeadMost(postings, clauses);
    if (most <= 0) return null;
    const docs = list.atMost(most);
    if (docs) this.listed = docs;
    // More than FILTER_LIST_MAX: the list is not read whole later either.
    else if (most >= FILTER_LIST_MAX) this.listWhole = false;
    return docs;
  }

  /** Whether the document passes the filter. */
  accepts(doc: number): boolean {
    const excluded = this.filter.excluded;
    if (excluded) {
      const i = lowerBound(excluded, excluded.length, doc);
      if (i < excluded.length && excluded[i] === doc) return false;
    }
    const list = this.filter.list;
    if (!list) return this.filter.matches(doc);
    if (!this.listed && !this.decided()) {
      this.asked++;
      const ok = this.filter.matches(doc);
      if (ok) this.passed++;
      return ok;
    }
    const listed = (this.listed ??= this.readList(list));
    if (!listed) return this.filter.matches(doc);
    const i = lowerBound(listed, listed.length, doc);
    return i < listed.length && listed[i] === doc && (list.exact || this.filter.matches(doc));
  }

  /** Whether a document in [from, to] may pass: false only when none does. */
  mayAcceptIn(from: number, to: number): boolean {
    const listed = this.listed;
    if (listed) {
      const i = lowerBound(listed, listed.length, from);
      if (i >= listed.length || listed[i]! > to) return false;
      if (this.filter.list!.exact) return true;
    }
    return this.filter.mayMatchIn?.(from, to) ?? true;
  }

  /** The filter's list, read up to FILTER_LIST_MAX documents; null (and never read again) when it has more. */
  private readList(list: FilterList): Uint32Array | null {
    const docs = list.atMost(FILTER_LIST_MAX);
    if (!docs) this.listWhole = false;
    return docs;
  }

  /** Whether the list is to be read whole, once FILTER_SAMPLE candidates have estimated the filter's cost. */
  private decided(): boolean {
    if (this.listWhole === null && this.asked >= FILTER_SAMPLE) this.listWhole = (this.passed / this.asked) * this.docs <= FILTER_LIST_MAX;
    return this.listWhole === true;
  }
}
