import { MemoryPostingStorage } from '../../shared/search/storage.js';
import type { TextQuery } from '../../shared/search/query.js';
import { searchIndex } from '../../shared/search/searcher.js';
import { TenantTail } from '../../shared/search/tail.js';
import type { SearchDocument } from '../../shared/search/document.js';
import { addStats, changeCoveredDocuments, documentChanges, mergeTerms } from '../../shared/search/writer.js';
import { corpus, prng, queries } from '../support/search-corpus.js';
import { oracleSearch } from '../support/search-oracle.js';

/**
 * The index and its tail (search-merge.ts): wherever a merge stands, even part-way through a batch, the
 * index's postings and the tail's together score exactly as the oracle scores every document.
 */

/** Merges `docs` (all above the storage's mark) as a batch: every term, then the statistics and the mark. */
function mergeBatch(storage: MemoryPostingStorage, tenant: string, docs: SearchDocument[], termsToo = Infinity): void {
  const upTo = docs.at(-1)!.doc;
  const { byTerm, stats } = documentChanges(docs);
  const terms = [...byTerm];
  mergeTerms(storage, tenant, terms.slice(0, termsToo), upTo);
  if (termsToo < terms.length) return;
  addStats(storage, tenant, stats);
  storage.setMergedUpTo(upTo);
}

function tailOf(docs: readonly SearchDocument[], above: number): TenantTail {
  const tail = new TenantTail();
  for (const d of docs) if (d.doc > above) tail.add(d);
  return tail;
}

function expectOracle(storage: MemoryPostingStorage, tail: TenantTail, docs: SearchDocument[], qs: TextQuery[], k = 10): void {
  for (const query of qs) {
    const got = searchIndex(storage, 't', query, { k, tail });
    expect({ query, got }).toEqual({ query, got: oracleSearch(docs, query, k) });
  }
}

test('documents split between the index and the tail score as if all were in the index', () => {
  const docs = corpus(31, 2400);
  for (const merged of [0, 1, 700, 2399, 2400]) {
    const storage = new MemoryPostingStorage();
    for (let i = 0; i < merged; i += 600) mergeBatch(storage, 't', docs.slice(i, Math.min(merged, i + 600)));
    expect(storage.mergedUpTo()).toBe(merged);
    expectOracle(storage, tailOf(docs, merged), docs, queries(31, 25), 20);
  }
});

test('part-way through a batch, each term is whole in the index or in the tail', () => {
  const docs = corpus(32, 1500);
  const storage = new MemoryPostingStorage();
  mergeBatch(storage, 't', docs.slice(0, 900));
  const batch = docs.slice(900, 1300);
  const termCount = documentChanges(batch).byTerm.size;
  for (const done of [0, 1, Math.floor(termCount / 3), termCount - 1]) {
    const copy = new MemoryPostingStorage();
    mergeBatch(copy, 't', docs.slice(0, 900));
    mergeBatch(copy, 't', batch, done);
    // The mark has not moved: the tail is everything above it, and each term's own mark says where it ends.
    expect(copy.mergedUpTo()).toBe(900);
    expectOracle(copy, tailOf(docs, 900), docs, queries(32, 25));
  }
  // And the batch, merged again from its start after a stop, ends where one merge would have.
  const resumed = new MemoryPostingStorage();
  mergeBatch(resumed, 't', docs.slice(0, 900));
  mergeBatch(resumed, 't', batch, Math.floor(termCount / 2));
  mergeBatch(resumed, 't', batch);
  mergeBatch(storage, 't', batch);
  for (const query of queries(33, 25)) {
    expect(searchIndex(resumed, 't', query, { k: 10, tail: tailOf(docs, 1300) })).toEqual(searchIndex(storage, 't', query, { k: 10, tail: tailOf(docs, 1300) }));
  }
  expect(resumed.stats('t')).toEqual(storage.stats('t'));
});

test('a document removed or given a new text, in the index, in the tail or part-way through a merge, leaves the index exact', () => {
  const random = prng(34);
  const docs = corpus(34, 1200);
  const storage = new MemoryPostingStorage();
  mergeBatch(storage, 't', docs.slice(0, 600));
  const batch = docs.slice(600, 1000);
  mergeBatch(storage, 't', batch, Math.floor(documentChanges(batch).byTerm.size / 2));
  let live = [...docs];
  // Deletes and new texts on every side: below the mark, in the batch cut short, in the tail beyond it.
  for (const doc of [5, 300, 599, 601, 777, 999, 1000, 1001, 1100]) {
    const old = live.find((d) => d.doc === doc)!;
    changeCoveredDocuments(storage, 't', [old], -1);
    live = live.filter((d) => d.doc !== doc);
    if (random() < 0.5) {
      const renewed = { ...old, title: `${old.title} w1x`, body: old.body.split(' ').reverse().join(' ') };
      changeCoveredDocuments(storage, 't', [renewed], +1);
      live = [...live, renewed].sort((a, b) => a.doc - b.doc);
    }
  }
  expectOracle(storage, tailOf(live, 600), live, queries(34, 30), 20);
  // Finishing the batch (read again, without the deleted records) and the rest keeps it exact.
  mergeBatch(storage, 't', live.filter((d) => d.doc > 600 && d.doc <= 1000));
  expectOracle(storage, tailOf(live, 1000), live, queries(35, 30), 20);
});

test("a tail drops what a merge took in, and its statistics follow", () => {
  const docs = corpus(36, 300);
  const tail = tailOf(docs, 0);
  const whole = documentChanges(docs).stats;
  expect(tail.stats).toEqual(whole);
  tail.dropThrough(120);
  expect(tail.size).toBe(180);
  expect(tail.stats).toEqual(documentChanges(docs.slice(120)).stats);
  const term = [...documentChanges(docs.slice(120)).byTerm.keys()][0]!;
  const blocks = tail.postings(term, 0);
  expect(blocks.every((b) => b.docs[0]! > 120)).toBe(true);
  expect(blocks.reduce((n, b) => n + b.count, 0)).toBe(documentChanges(docs.slice(120)).byTerm.get(term)!.length);
  expect(() => tail.add(docs[10]!)).toThrow(/in order/);
});
