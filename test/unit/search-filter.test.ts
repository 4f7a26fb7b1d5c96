import { CLAUSE_AT_DOCUMENT_COST, FILTER_LEAD_MAX, FILTER_LIST_MAX, FILTER_SAMPLE, filterLeadMost, filterListReadMost } from '../../shared/search/cost.js';
import { FilterClause, type Filter } from '../../shared/search/filter.js';
import { searchIndex } from '../../shared/search/searcher.js';
import { MemoryPostingStorage } from '../../shared/search/storage.js';
import { addDocuments } from '../../shared/search/writer.js';
import { corpus, queries } from '../support/search-corpus.js';
import { oracleSearch } from '../support/search-oracle.js';

/**
 * The filter clause (shared/search/filter.ts): which way it reads a filter, by what each way costs
 * (cost.ts), and that the search finds the same whichever way it took.
 */

/** A filter over `members` (a sorted list), which counts how it is read; `also` is a further condition the list does not know. */
function countingFilter(members: number[], also?: (doc: number) => boolean) {
  const set = new Set(members);
  // `led`: the list was read to lead the search; `all`: how many times it was read to be listed whole.
  const calls = { matches: 0, mayMatchIn: 0, atMost: [] as number[], led: false, all: 0 };
  const filter: Filter = {
    matches: (doc) => (calls.matches++, set.has(doc) && (!also || also(doc))),
    mayMatchIn: (from, to) => (calls.mayMatchIn++, members.some((d) => d >= from && d <= to && (!also || also(d)))),
    list: {
      atMost: (most) => {
        calls.atMost.push(most);
        const fits = members.length <= most;
        if (most === FILTER_LIST_MAX) calls.all++;
        else calls.led = fits;
        return fits ? Uint32Array.from(members) : null;
      },
      exact: !also,
    },
  };
  return { filter, calls };
}

test('a filter leads the search when reading each clause at its documents costs less than walking the postings', () => {
  const { filter, calls } = countingFilter([5, 9, 40]);
  const clause = new FilterClause(filter, 100_000);
  // 11 documents' worth of postings for one clause: it may list 10.
  expect(clause.lead(11 * CLAUSE_AT_DOCUMENT_COST, 1)).toEqual(Uint32Array.from([5, 9, 40]));
  expect(calls.atMost).toEqual([10]);
  // Its list then answers for it: an exact list needs no check.
  expect(clause.accepts(9)).toBe(true);
  expect(clause.accepts(10)).toBe(false);
  expect(calls.matches).toBe(0);
  // Never more than FILTER_LEAD_MAX; not asked at all when no list would be cheaper.
  new FilterClause(filter, 100_000).lead(1e9, 1);
  expect(calls.atMost.at(-1)).toBe(FILTER_LEAD_MAX);
  expect(new FilterClause(filter, 100_000).lead(CLAUSE_AT_DOCUMENT_COST, 2)).toBeNull();
  expect(calls.atMost).toHaveLength(2);
});

test('a filter of few documents, by the share of its first candidates that pass, is listed whole; a common one is checked one by one', () => {
  const docs = 100_000;
  // One candidate in 64 passes: about 1 600 documents, under FILTER_LIST_MAX.
  const rare = countingFilter(Array.from({ length: 1600 }, (_, i) => 64 * (i + 1)));
  const few = new FilterClause(rare.filter, docs);
  for (let doc = 1; doc <= FILTER_SAMPLE; doc++) few.accepts(doc);
  expect(rare.calls.matches).toBe(FILTER_SAMPLE);
  expect(rare.calls.all).toBe(0);
  expect(few.accepts(64 * 100)).toBe(true);
  expect(few.accepts(64 * 100 + 1)).toBe(false);
  expect(rare.calls.all).toBe(1);
  expect(rare.calls.atMost).toEqual([FILTER_LIST_MAX]);
  expect(rare.calls.matches).toBe(FILTER_SAMPLE);
  // Its list now rules out windows without asking.
  expect(few.mayAcceptIn(1, 63)).toBe(false);
  expect(few.mayAcceptIn(60, 70)).toBe(true);
  expect(rare.calls.mayMatchIn).toBe(0);

  // Half of the candidates pass: about 50 000 documents, more than FILTER_LIST_MAX.
  const common = countingFilter(Array.from({ length: docs / 2 }, (_, i) => 2 * (i + 1)));
  const many = new FilterClause(common.filter, docs);
  for (let doc = 1; doc <= 4 * FILTER_SAMPLE; doc++) many.accepts(doc);
  expect(common.calls.matches).toBe(4 * FILTER_SAMPLE);
  expect(common.calls.all).toBe(0);
  expect(many.mayAcceptIn(3, 3)).toBe(false);
  expect(common.calls.mayMatchIn).toBe(1);
  expect(docs / 2).toBeGreaterThan(FILTER_LIST_MAX);
});

test('a filter whose first candidates misjudged it is read no further than FILTER_LIST_MAX, then checked one by one', () => {
  const docs = 100_000;
  // Its first 64 candidates pass 1 in 64 (an estimate of 1 563), but it has 40 000 documents above them.
  const members = [...Array.from({ length: 1 }, () => 64), ...Array.from({ length: 40_000 }, (_, i) => 1_000 + 2 * i)];
  const { filter, calls } = countingFilter(members);
  const clause = new FilterClause(filter, docs);
  for (let doc = 1; doc <= FILTER_SAMPLE; doc++) clause.accepts(doc);
  // The read stops one past FILTER_LIST_MAX and finds too many: none is listed, each is checked.
  expect(clause.accepts(1_000)).toBe(true);
  expect(calls.atMost).toEqual([FILTER_LIST_MAX]);
  expect(clause.accepts(1_001)).toBe(false);
  expect(clause.accepts(80_998)).toBe(true);
  expect(clause.mayAcceptIn(1_001, 1_001)).toBe(false);
  // Never read again: the rest are asked one by one.
  expect(calls.atMost).toEqual([FILTER_LIST_MAX]);
  expect(calls.matches).toBe(FILTER_SAMPLE + 3);
  expect(members.length).toBeGreaterThan(FILTER_LIST_MAX);
});

test("a lead's try that read FILTER_LIST_MAX and found more is not followed by a read of the whole list", () => {
  // One document in 50 of a million: more than FILTER_LIST_MAX, though 1 of the first 64 candidates passes.
  const members = Array.from({ length: FILTER_LIST_MAX + 10 }, (_, i) => 50 * (i + 1));
  const { filter, calls } = countingFilter(members);
  const clause = new FilterClause(filter, 1_000_000);
  expect(clause.lead(1e9, 1)).toBeNull();
  expect(calls.atMost).toEqual([FILTER_LEAD_MAX]);
  expect(FILTER_LEAD_MAX).toBe(FILTER_LIST_MAX);
  // The sample would estimate it at 15 625 documents, under FILTER_LIST_MAX: it is checked one by one all the same.
  for (let doc = 1; doc <= FILTER_SAMPLE; doc++) clause.accepts(doc);
  expect(clause.accepts(100)).toBe(true);
  expect(clause.accepts(101)).toBe(false);
  expect(calls.atMost).toEqual([FILTER_LEAD_MAX]);
  expect(calls.matches).toBe(FILTER_SAMPLE + 2);
});

test("a search reads at most filterListReadMost documents of a filter's list: the lead's try and the list read whole", () => {
  // No lead's try up to CLAUSE_AT_DOCUMENT_COST postings: the whole list's read at most.
  expect(filterLeadMost(CLAUSE_AT_DOCUMENT_COST, 1)).toBe(0);
  expect(filterListReadMost(CLAUSE_AT_DOCUMENT_COST)).toBe(FILTER_LIST_MAX + 1);
  // A try of 99 (and one past it), then the list.
  expect(filterListReadMost(100 * CLAUSE_AT_DOCUMENT_COST)).toBe(100 + FILTER_LIST_MAX + 1);
  expect(filterListReadMost(1e9)).toBe(FILTER_LEAD_MAX + 1 + FILTER_LIST_MAX + 1);
  // It grows with the postings, so a bound of them bounds it, whatever the clauses.
  for (let postings = 0; postings < 300_000; postings += 997) {
    expect(filterListReadMost(postings + 997)).toBeGreaterThanOrEqual(filterListReadMost(postings));
    for (const clauses of [1, 2, 5]) expect(Math.max(0, filterLeadMost(postings, clauses) + 1) + FILTER_LIST_MAX + 1).toBeLessThanOrEqual(filterListReadMost(postings));
  }
});

test('a listed filter with a further condition still checks it, document by document and window by window', () => {
  const { filter, calls } = countingFilter([2, 4, 6, 8], (doc) => doc !== 4);
  const clause = new FilterClause(filter, 10);
  expect(clause.lead(1e6, 1)).toEqual(Uint32Array.from([2, 4, 6, 8]));
  expect(clause.accepts(4)).toBe(false);
  expect(clause.accepts(6)).toBe(true);
  expect(calls.matches).toBe(2);
  expect(clause.mayAcceptIn(4, 5)).toBe(false);
  expect(clause.mayAcceptIn(9, 20)).toBe(false);
  expect(calls.mayMatchIn).toBe(1);
});

test('whichever way the filter is read, the search finds what the oracle finds', () => {
  const storage = new MemoryPostingStorage();
  const docs = corpus(17, 6000);
  addDocuments(storage, 't', docs);
  const ways = { led: 0, listedWhole: 0, checked: 0 };
  // An agent of 1 in 40 documents (listed whole after the first checks, or leading), and one of every third.
  for (const [every, also] of [[40, undefined], [40, (doc: number) => doc % 3 !== 0], [3, undefined]] as const) {
    const members = docs.filter((d) => d.doc % every === 0).map((d) => d.doc);
    for (const query of queries(17, 30)) {
      for (const k of [1, 10, 100]) {
        const { filter, calls } = countingFilter(members, also);
        const got = searchIndex(storage, 't', query, { k, filter });
        const accept = (doc: number) => doc % every === 0 && (!also || also(doc));
        expect({ query, k, got }).toEqual({ query, k, got: oracleSearch(docs, query, k, { accept }) });
        if (calls.led) ways.led++;
        else if (calls.all > 0) ways.listedWhole++;
        else ways.checked++;
      }
    }
  }
  expect(ways.led).toBeGreaterThan(0);
  expect(ways.listedWhole).toBeGreaterThan(0);
  expect(ways.checked).toBeGreaterThan(0);
});
