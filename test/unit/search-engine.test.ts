import { jest } from '@jest/globals';
import Database from 'better-sqlite3';
import { POSTING_TABLES_SQL, SqlitePostingStorage } from '../../shared/adapters/local/posting-storage.js';
import { analyze } from '../../shared/search/analyzer.js';
import { appendPostings, BLOCK_SIZE, blockPostings, encodeBlock, sliceBlock, type Posting } from '../../shared/search/block.js';
import { blockBound, decodeMetas, encodeMetas, MAX_IMPACTS, MetaTable, metaOf } from '../../shared/search/metas.js';
import { decodeScores, decodeSealed, encodeSealed, scoreColumns, SealedDocs } from '../../shared/search/sealed.js';
import { clauseScore, clauseWeight, idf } from '../../shared/search/scoring.js';
import { RANKING } from '../../shared/domain/rank.js';
import { FILTER_LIST_MAX, POSITION_COST, searchCost } from '../../shared/search/cost.js';
import type { SearchDocument } from '../../shared/search/document.js';
import { clausesOf, type TextQuery } from '../../shared/search/query.js';
import { DEFAULT_RANKING } from '../../shared/search/ranking.js';
import { HELD_SHARE_POWER } from '../../shared/search/best.js';
import { PROXIMITY_WINDOW, searchIndex, searchScored } from '../../shared/search/searcher.js';
import { MemoryPostingStorage, SnapshotReads, type PostingStorage } from '../../shared/search/storage.js';
import { EMPTY_TAIL, TenantTail } from '../../shared/search/tail.js';
import { phrasePostings, termPostings } from '../../shared/search/postings.js';
import { ClauseCursor } from '../../shared/search/cursor.js';
import { addDocuments, removeDocuments } from '../../shared/search/writer.js';
import { corpus, prng, queries, VOCABULARY } from '../support/search-corpus.js';
import { oracleBest, oracleSearch } from '../support/search-oracle.js';

/**
 * The search engine of shared/search against its brute-force oracle: on random corpora, after random
 * inserts and deletes, the pruned top k equals the exhaustive one exactly.
 */

function expectSameTopK(storage: PostingStorage, tenant: string, docs: SearchDocument[], query: TextQuery, k: number, accept?: (doc: number) => boolean) {
  const { hits: got, best } = searchScored(storage, tenant, query, { k, filter: accept && { matches: accept } });
  const want = oracleSearch(docs, query, k, { accept });
  expect({ query, k, got }).toEqual({ query, k, got: want });
  // The bound the ranks divide by is the oracle's to the bit, and no document reaches it.
  expect({ query, best }).toEqual({ query, best: oracleBest(docs, query) });
  for (const hit of got) expect(hit.score).toBeLessThan(best);
}

test('analysis: stems English words, folds case, width and diacritics, splits on punctuation', () => {
  expect(analyze('Running RUNS ran')).toEqual(['run', 'run', 'ran']);
  expect(analyze("The user's e-mail")).toEqual(['the', 'user', 'e', 'mail']);
  expect(analyze('Café ﬁne ＡＢＣ naïve')).toEqual(['cafe', 'fine', 'abc', 'naiv']);
  expect(analyze('Ωμέγα Привет हिन्दी 42')).toEqual(['ωμεγα', 'привет', 'हिन्दी', '42']);
  expect(analyze('x'.repeat(500))[0]).toHaveLength(64);
});

test('appending postings to an encoded block, and cutting one, give the bytes of encoding the lists', () => {
  const random = prng(3);
  const postings: Posting[] = [];
  let bytes: Uint8Array = new Uint8Array(0);
  const positions = (n: number) => Array.from({ length: n }, (_, i) => i * 2 + Math.floor(random() * 2));
  for (let doc = 1; doc <= 120; ) {
    // One at a time, or a few at once, as a merge appends them.
    const more = Array.from({ length: 1 + Math.floor(random() * 4) }, () => ({ doc: 3 * doc++, posT: positions(Math.floor(random() * 3)), posB: positions(Math.floor(random() * 5)), lenT: 9, lenB: 40 + doc }));
    postings.push(...more);
    bytes = appendPostings(bytes, more);
    expect(Buffer.from(bytes).equals(Buffer.from(encodeBlock(postings)))).toBe(true);
  }
  for (const [from, to] of [[0, 10], [7, 33], [0, postings.length], [50, postings.length]] as const) {
    expect(Buffer.from(sliceBlock(bytes, from, to)).equals(Buffer.from(encodeBlock(postings.slice(from, to))))).toBe(true);
  }
});

test('a sealed block decodes to its postings, whatever widths its columns need, whole or its documents alone', () => {
  const random = prng(4);
  const into = scoreColumns(4);
  const docsOnly = new SealedDocs();
  // Each column at 1 and 2 bytes a value (the gaps at 4 too), in every combination the four make.
  const cases = [[1, 3, 200, 30], [300, 3, 200, 30], [70_000, 300, 9000, 300], [5, 1, 65_535, 30], [3, 300, 100, 300], [2, 1, 100, 300]] as const;
  for (const [gap, tf, lenB, lenT] of cases) {
    const postings: Posting[] = [];
    for (let i = 0, doc = 7; i < 130; i++, doc += 1 + Math.floor(random() * gap)) {
      const n = (max: number) => Math.floor(random() * max);
      postings.push({ doc, posT: Array.from({ length: n(3) }, (_, j) => j), posB: Array.from({ length: n(tf) }, (_, j) => 2 * j), lenT: 1 + n(lenT), lenB: n(lenB) });
    }
    const sealed = encodeSealed(postings);
    expect(blockPostings(decodeSealed(sealed))).toEqual(postings);
    // Decoding into kept arrays grows them, and reads the same.
    const c = decodeScores(sealed.scores, into);
    expect(Array.from(c.docs.subarray(0, c.count))).toEqual(postings.map((p) => p.doc));
    expect(Array.from(c.lenB.subarray(0, c.count))).toEqual(postings.map((p) => p.lenB));
    // The documents alone, and each posting's counts and lengths read from the bytes.
    const d = docsOnly.decode(sealed.scores);
    expect(Array.from(d.docs.subarray(0, d.count))).toEqual(postings.map((p) => p.doc));
    expect(postings.map((_, i) => [d.tfT(i), d.tfB(i), d.lenT(i), d.lenB(i)])).toEqual(postings.map((p) => [p.posT.length, p.posB.length, p.lenT, p.lenB]));
  }
  // A common word's block takes about 6 bytes a posting for its scores.
  const dense = Array.from({ length: 128 }, (_, i) => ({ doc: 1000 + 2 * i, posT: [0], posB: [4, 9], lenT: 9, lenB: 300 }));
  expect(encodeSealed(dense).scores.byteLength).toBeLessThanOrEqual(6 * 128 + 8);
});

test('the meta table reads the bounds of the stored metas, and of the ones kept beside them', () => {
  const docs = corpus(6, 600);
  const metas = [0, 128, 256, 384].map((from) => metaOf(docs.slice(from, from + 128).map((d) => ({ doc: d.doc, posT: d.title.split(' ').length > 3 ? [0, 2] : [1], posB: [0], lenT: d.title.split(' ').length, lenB: 1 + d.body.split(' ').length })), DEFAULT_RANKING.titleWeight));
  const table = MetaTable.of(encodeMetas(metas.slice(0, 3)), metas.slice(3));
  expect(table.length).toBe(4);
  expect(table.stored).toBe(3);
  expect(Array.from(table.first)).toEqual(metas.map((m) => m.first));
  expect(Array.from(table.last)).toEqual(metas.map((m) => m.last));
  for (const params of [DEFAULT_RANKING, { k1: 0.9, b: 0.3, titleWeight: 1, proximity: 0 }]) {
    const w = clauseWeight(params, { docs: 600, titleWords: 3000, bodyWords: 12000 }, 1.7);
    expect(Array.from(table.bounds(w))).toEqual(metas.map((m) => blockBound(w, m)));
  }
  expect(MetaTable.of(null, []).length).toBe(0);
  // Impacts kept for another title weight (an index written before the ranking changed) bound by the extremes.
  const stale = metas.map((m) => ({ ...m, impactWeight: m.impactWeight + 100 }));
  const w = clauseWeight(DEFAULT_RANKING, { docs: 600, titleWords: 3000, bodyWords: 12000 }, 1.7);
  const extremes = metas.map((m) => clauseScore(w, m.maxTfT, m.maxTfB, m.minLenT, m.minLenB));
  expect(Array.from(MetaTable.of(encodeMetas(stale), []).bounds(w))).toEqual(extremes);
  expect(stale.map((m) => blockBound(w, m))).toEqual(extremes);
  expect(extremes.some((bound, i) => bound > blockBound(w, metas[i]!))).toBe(true);
});

test("the engine's default ranking is the service's (shared/domain/rank.ts), so the oracle tests and the engine benchmark measure what the service ranks with", () => {
  expect({ ...DEFAULT_RANKING }).toEqual({ ...RANKING });
});

test('the IDF stays positive for a word in every document, and falls as the word gets commoner', () => {
  expect(idf(10, 10)).toBeGreaterThan(0);
  expect(idf(10, 1)).toBeGreaterThan(idf(10, 5));
  expect(idf(10, 5)).toBeGreaterThan(idf(10, 10));
});

describe('the pruned top k equals the oracle', () => {
  test.each([1, 2, 3])('on a random corpus of 3 000 documents (seed %i), for k = 1, 10 and 100', (seed) => {
    const storage = new MemoryPostingStorage();
    const docs = corpus(seed, 3000);
    for (let i = 0; i < docs.length; i += 500) addDocuments(storage, 't', docs.slice(i, i + 500));
    for (const query of queries(seed, 40)) for (const k of [1, 10, 100]) expectSameTopK(storage, 't', docs, query, k);
  });

  test.each([4, 5])('for phrases the documents hold, alone and with other words, on 6 000 documents of few words (seed %i), for k = 1, 10 and 100', (seed) => {
    // Few distinct words, so that phrases of common words are in many blocks, with and without each other.
    const few = (w: string) => VOCABULARY[VOCABULARY.indexOf(w) % 12]!;
    const docs = corpus(seed, 6000).map((d) => ({ ...d, title: d.title.split(' ').map(few).join(' '), body: d.body.split(' ').map(few).join(' ') }));
    const storage = new MemoryPostingStorage();
    for (let i = 0; i < docs.length; i += 1000) addDocuments(storage, 't', docs.slice(i, i + 1000));
    const random = prng(seed);
    const pick = (n: number) => Math.floor(random() * n);
    for (let q = 0; q < 24; q++) {
      // Two or three adjacent words of some document's body, and up to two other words.
      const words = docs[pick(docs.length)]!.body.split(' ');
      if (words.length < 3) continue;
      const at = pick(words.length - 2);
      const phrase = words.slice(at, at + 2 + pick(2)).map((w) => analyze(w)[0]!);
      const terms = Array.from({ length: pick(3) }, () => analyze(VOCABULARY[pick(12)]!)[0]!);
      for (const k of [1, 10, 100]) expectSameTopK(storage, 't', docs, { terms, phrases: [phrase] }, k);
    }
  });

  test('a phrase block loaded for a floor leaves out the documents below it, and is loaded again whole when a lower floor or a lookup asks', () => {
    // "a b" in every document, its body's length (and so its score) varying from one to the next.
    const docs = Array.from({ length: 300 }, (_, i) => ({ doc: i + 1, title: 'x', body: `a b${' c'.repeat(i % 37)}` }));
    const storage = new MemoryPostingStorage();
    addDocuments(storage, 't', docs);
    const stats = storage.stats('t')!;
    const parts = ['a', 'b'].map((term) => termPostings(storage, 't', term, EMPTY_TAIL, 0, DEFAULT_RANKING.titleWeight)!);
    const weight = clauseWeight(DEFAULT_RANKING, stats, idf(stats.docs, 300) * 2);
    const phrase = phrasePostings(parts, weight);
    const cursor = new ClauseCursor(0, weight, phrase.metas, phrase.load, 300, undefined, phrase.lookup);
    const docsOf = (b: { count: number; docs: Uint32Array }) => Array.from(b.docs.subarray(0, b.count));
    const whole = docs.filter((d) => d.doc <= phrase.metas.last[0]!).map((d) => d.doc);
    const scores = whole.map((doc) => clauseScore(weight, 0, 1, 1, 2 + ((doc - 1) % 37)));
    // A floor halfway between two of the scores, so that no score is near it.
    const distinct = [...new Set(scores)].sort((x, y) => x - y);
    const floor = (distinct[distinct.length >> 1]! + distinct[(distinct.length >> 1) + 1]!) / 2;
    // Loaded for the floor: the documents that could reach it, every one of them.
    const high = docsOf(cursor.block(0, floor));
    expect(high).toEqual(whole.filter((_, i) => scores[i]! >= floor));
    expect(high.length).toBeLessThan(whole.length);
    // A lower floor, or none, loads it again (a higher one keeps what is loaded: all it needs is there).
    expect(docsOf(cursor.block(0, -Infinity))).toEqual(whole);
    expect(docsOf(cursor.block(0, floor))).toEqual(whole);
    // A lookup finds a document the floor left out.
    const other = new ClauseCursor(0, weight, phrase.metas, phrase.load, 300, undefined, phrase.lookup);
    other.block(0, floor);
    const left = whole.find((_, i) => scores[i]! < floor)!;
    expect(other.scoreOf(left)).toBeCloseTo(scores[whole.indexOf(left)]!, 12);
  });

  test('and would not with bounds too tight: the comparisons catch a bound 5 % under the truth, and their queries rank by proximity too', () => {
    const storage = new MemoryPostingStorage();
    const docs = corpus(2, 3000);
    addDocuments(storage, 't', docs);
    const bounds = MetaTable.prototype.bounds;
    const tight = jest.spyOn(MetaTable.prototype, 'bounds').mockImplementation(function (this: MetaTable, w) {
      return bounds.call(this, w).map((b) => b * 0.95);
    });
    try {
      const differ = (query: TextQuery) => [1, 10, 100].some((k) => JSON.stringify(searchIndex(storage, 't', query, { k })) !== JSON.stringify(oracleSearch(docs, query, k)));
      expect(queries(2, 40).filter(differ).length).toBeGreaterThan(0);
    } finally {
      tight.mockRestore();
    }
    // The same queries do exercise proximity: without it, the oracle's top k differs for some of them.
    const flat = { ...DEFAULT_RANKING, proximity: 0 };
    expect(queries(2, 40).some((q) => JSON.stringify(oracleSearch(docs, q, 10)) !== JSON.stringify(oracleSearch(docs, q, 10, { params: flat })))).toBe(true);
    // Proximity ranks the best PROXIMITY_WINDOW again, so every k up to it gets the start of one list.
    for (const query of queries(2, 40)) {
      const list = searchIndex(storage, 't', query, { k: PROXIMITY_WINDOW });
      for (const k of [1, 5, 10]) expect(searchIndex(storage, 't', query, { k })).toEqual(list.slice(0, k));
    }
  });

  test('on SQLite storage, whose blocks proximity reads at once (blocksAt), the same as one by one', () => {
    const db = new Database(':memory:');
    db.exec(POSTING_TABLES_SQL);
    const storage = new SqlitePostingStorage(db);
    const docs = corpus(7, 3000);
    for (let i = 0; i < docs.length; i += 500) addDocuments(storage, 't', docs.slice(i, i + 500));
    const term = 'w1x';
    const lasts = MetaTable.of(storage.metas('t', term), []).last.filter((_, i) => i % 3 === 0);
    expect(lasts.length).toBeGreaterThan(2);
    expect(storage.blocksAt('t', term, [...lasts])).toEqual([...lasts].map((last) => ({ scores: storage.block('t', term, last), positions: storage.positions('t', term, last) })));
    for (const query of queries(7, 30).filter((q) => q.terms.length >= 2)) for (const k of [5, 50]) expectSameTopK(storage, 't', docs, query, k);
    db.close();
  });

  test("through one snapshot's reads, which read each term's head and metas and the merge mark once, the bound's and the search's together", () => {
    const storage = new MemoryPostingStorage();
    const docs = corpus(4, 2000);
    for (let i = 0; i < docs.length; i += 500) addDocuments(storage, 't', docs.slice(i, i + 500));
    const calls = { head: 0, metas: 0, mergedUpTo: 0 };
    const counted: PostingStorage = Object.assign(Object.create(storage) as PostingStorage, {
      head: (tenant: string, term: string) => (calls.head++, storage.head(tenant, term)),
      metas: (tenant: string, term: string) => (calls.metas++, storage.metas(tenant, term)),
      mergedUpTo: () => (calls.mergedUpTo++, storage.mergedUpTo()),
    });
    for (const query of queries(4, 20)) {
      Object.assign(calls, { head: 0, metas: 0, mergedUpTo: 0 });
      const reads = new SnapshotReads(counted);
      const clauses = clausesOf(query);
      expect(searchCost(reads, 't', clauses, new TenantTail(), Infinity)).toBe(searchCost(storage, 't', clauses, new TenantTail(), Infinity));
      expect(searchIndex(reads, 't', query, { k: 10 })).toEqual(searchIndex(storage, 't', query, { k: 10 }));
      const terms = new Set(clauses.flatMap((c) => c.terms)).size;
      expect(calls).toEqual({ head: terms, metas: expect.any(Number), mergedUpTo: 1 });
      expect(calls.metas).toBeLessThanOrEqual(terms);
    }
    expect(() => new SnapshotReads(storage).setHead()).toThrow(/read-only/);
    expect(() => new SnapshotReads(storage).setMergedUpTo()).toThrow(/read-only/);
  });

  test('with other parameters than the impacts were kept for (the bounds fall back to the extremes)', () => {
    const storage = new MemoryPostingStorage();
    const docs = corpus(4, 2000);
    addDocuments(storage, 't', docs);
    for (const params of [{ k1: 0.6, b: 0.3, titleWeight: 1, proximity: 0 }, { k1: 2, b: 1, titleWeight: DEFAULT_RANKING.titleWeight + 2.5, proximity: 1 }, { ...DEFAULT_RANKING, b: 0.2 }]) {
      for (const query of queries(4, 20)) {
        const got = searchIndex(storage, 't', query, { k: 10, ranking: params });
        expect({ query, params, got }).toEqual({ query, params, got: oracleSearch(docs, query, 10, { params }) });
      }
    }
  });

  test('on an index written for another ranking: its impacts are kept for that title weight, and bound exactly', () => {
    const ranking = { k1: 2, b: 1, titleWeight: 6.5, proximity: 0.5 };
    const storage = new MemoryPostingStorage();
    const docs = corpus(4, 2000);
    addDocuments(storage, 't', docs, ranking);
    expect(decodeMetas(storage.metas('t', 'w1x')!).every((m) => m.impactWeight === 650 && m.impacts.length > 0)).toBe(true);
    for (const query of queries(4, 20)) {
      const got = searchIndex(storage, 't', query, { k: 10, ranking });
      expect({ query, got }).toEqual({ query, got: oracleSearch(docs, query, 10, { params: ranking }) });
    }
  });

  test("a block's impacts bound every document of the block, and the best of them is one of its documents", () => {
    const docs = corpus(5, 1000);
    for (const [start, end] of [[0, BLOCK_SIZE], [200, 260], [500, 501]] as const) {
      const postings = docs.slice(start, end).map((d) => ({ doc: d.doc, posT: [0], posB: d.body ? [1] : [], lenT: d.title.split(' ').length, lenB: d.body.split(' ').length }));
      const meta = metaOf(postings, DEFAULT_RANKING.titleWeight);
      expect(meta.impacts.length / 4).toBeGreaterThan(0);
      expect(meta.impacts.length / 4).toBeLessThanOrEqual(MAX_IMPACTS);
      const w = clauseWeight(DEFAULT_RANKING, { docs: 1000, titleWords: 5000, bodyWords: 20000 }, 2);
      const scores = postings.map((p) => clauseScore(w, p.posT.length, p.posB.length, p.lenT, p.lenB));
      const impactScores = Array.from({ length: meta.impacts.length / 4 }, (_, i) => clauseScore(w, ...([...meta.impacts.subarray(4 * i, 4 * i + 4)] as [number, number, number, number])));
      expect(Math.max(...impactScores)).toBeGreaterThanOrEqual(Math.max(...scores));
      if (meta.impacts.length / 4 < MAX_IMPACTS) expect(Math.max(...impactScores)).toBe(Math.max(...scores));
      expect(decodeMetas(encodeMetas([meta, meta]))).toEqual([meta, meta]);
    }
  });

  test('with a filter, which is asked only about documents that would enter the top k', () => {
    const storage = new MemoryPostingStorage();
    const docs = corpus(7, 2000);
    addDocuments(storage, 't', docs);
    const accept = (doc: number) => doc % 3 === 0;
    let asked = 0;
    for (const query of queries(7, 30)) {
      expectSameTopK(storage, 't', docs, query, 10, accept);
      searchIndex(storage, 't', query, { k: 10, filter: { matches: (doc) => (asked++, accept(doc)) } });
    }
    expect(asked).toBeLessThan(30 * 2000);
  });

  test('with a filter that rules out whole windows (a since), which are then skipped unread', () => {
    const storage = new MemoryPostingStorage();
    const docs = corpus(9, 4000);
    addDocuments(storage, 't', docs);
    // The newer third, and one old document: a filter that is not a plain range.
    const accept = (doc: number) => doc > 2700 || doc === 15;
    const acceptsAny = (from: number, to: number) => to > 2700 || (from <= 15 && 15 <= to);
    let withWindows = 0;
    let without = 0;
    for (const query of queries(9, 30)) {
      for (const k of [1, 10, 100]) {
        const got = searchIndex(storage, 't', query, { k, filter: { matches: (doc) => (withWindows++, accept(doc)), mayMatchIn: acceptsAny } });
        expect({ query, k, got }).toEqual({ query, k, got: oracleSearch(docs, query, k, { accept }) });
        searchIndex(storage, 't', query, { k, filter: { matches: (doc) => (without++, accept(doc)) } });
      }
    }
    expect(withWindows).toBeLessThan(without / 2);
  });

  test('among a few given documents (an agent of few records), read at each of them, with their ties, phrases and a tail', () => {
    const storage = new MemoryPostingStorage();
    // Twins: every 197th document has its predecessor's text, so both score the same and the tie order counts.
    const docs = corpus(13, 6000).map((d, i, all) => (i % 197 === 0 && i > 0 ? { ...all[i - 1]!, doc: d.doc } : d));
    addDocuments(storage, 't', docs.slice(0, 5000));
    // The last thousand in a tail: the same statistics, blocks after the index's.
    const tail = new TenantTail();
    for (const d of docs.slice(5000)) tail.add(d);
    const random = prng(13);
    const few = docs.filter((_, i) => (i > 0 && i % 197 === 0) || i % 197 === 196 || random() < 0.005).map((d) => d.doc);
    const among = Uint32Array.from(few);
    const member = new Set(few);
    const other = (doc: number) => doc % 4 !== 0;
    let used = 0;
    for (const query of queries(13, 20)) {
      for (const k of [1, 10, 100]) {
        for (const [exact, accept] of [[true, (doc: number) => member.has(doc)], [false, (doc: number) => member.has(doc) && other(doc)]] as const) {
          const asked = new Set<number>();
          let led = false;
          // Led: read before the search (a read to list it whole, FILTER_LIST_MAX, comes after candidates were asked).
          const list = { atMost: (most: number) => (among.length <= most ? ((led ||= most !== FILTER_LIST_MAX), among) : null), exact };
          const got = searchIndex(storage, 't', query, { k, filter: { matches: (doc) => (asked.add(doc), accept(doc)), list }, tail });
          expect({ query, k, got }).toEqual({ query, k, got: oracleSearch(docs, query, k, { accept }) });
          if (!led) continue;
          used++;
          // Read at the given documents only: no other document is ever asked about, and none at all when
          // the list is the filter exactly.
          expect([...asked].every((doc) => member.has(doc))).toBe(true);
          if (exact) expect(asked.size).toBe(0);
        }
      }
    }
    expect(used).toBeGreaterThan(40);
  });

  test('after deletes in sealed and open blocks, inserts below sealed blocks, and one document at a time', () => {
    const storage = new MemoryPostingStorage();
    const random = prng(11);
    const all = corpus(11, 2500);
    // Odd documents first, in batches; the even ones later land inside sealed blocks, and may split them.
    const odd = all.filter((d) => d.doc % 2 === 1);
    const even = all.filter((d) => d.doc % 2 === 0);
    for (let i = 0; i < odd.length; i += 300) addDocuments(storage, 't', odd.slice(i, i + 300));
    for (const d of even) addDocuments(storage, 't', [d]);
    let live = [...all];
    // Delete a third, at random, some in batches and some alone.
    const doomed = live.filter(() => random() < 0.33);
    removeDocuments(storage, 't', doomed.slice(0, 400));
    for (const d of doomed.slice(400)) removeDocuments(storage, 't', [d]);
    const gone = new Set(doomed.map((d) => d.doc));
    live = live.filter((d) => !gone.has(d.doc));
    for (const query of queries(11, 40)) for (const k of [1, 10, 50]) expectSameTopK(storage, 't', live, query, k);
    // Put some back with new text: statistics and postings follow.
    const back = doomed.slice(0, 200).map((d, i) => ({ ...d, title: `${d.title} w0x`, body: i % 2 ? d.body : '' }));
    addDocuments(storage, 't', back);
    live = [...live, ...back].sort((a, b) => a.doc - b.doc);
    for (const query of queries(12, 40)) expectSameTopK(storage, 't', live, query, 10);
  });

  test('removing every document leaves nothing behind', () => {
    const storage = new MemoryPostingStorage();
    const docs = corpus(5, BLOCK_SIZE * 6);
    addDocuments(storage, 't', docs);
    expect(storage.size).toBeGreaterThan(0);
    removeDocuments(storage, 't', docs.filter((d) => d.doc % 2 === 0));
    removeDocuments(storage, 't', docs.filter((d) => d.doc % 2 === 1).reverse());
    expect(storage.size).toBe(0);
    expect(searchIndex(storage, 't', { terms: ['w1x'], phrases: [] }, { k: 10 })).toEqual([]);
  });
});

describe('tenants', () => {
  test("a tenant's results and scores do not change when another tenant writes 10 000 documents", () => {
    const storage = new MemoryPostingStorage();
    const mine = corpus(21, 500);
    addDocuments(storage, 'a', mine);
    const qs = queries(21, 20);
    const before = qs.map((q) => searchIndex(storage, 'a', q, { k: 10 }));
    const theirs = corpus(22, 10_000, 501);
    for (let i = 0; i < theirs.length; i += 1000) addDocuments(storage, 'b', theirs.slice(i, i + 1000));
    expect(qs.map((q) => searchIndex(storage, 'a', q, { k: 10 }))).toEqual(before);
    // And the other tenant's documents are never found from this one.
    const seen = new Set(qs.flatMap((q) => searchIndex(storage, 'a', q, { k: 100 }).map((r) => r.doc)));
    expect([...seen].every((doc) => doc <= 500)).toBe(true);
  });
});

test('a word the query names twice weighs twice: every score doubles, the order stays', () => {
  const storage = new MemoryPostingStorage();
  const docs = corpus(8, 800);
  addDocuments(storage, 't', docs);
  const once = searchIndex(storage, 't', { terms: ['w3x'], phrases: [] }, { k: 50 });
  const twice = searchIndex(storage, 't', { terms: ['w3x', 'w3x'], phrases: [] }, { k: 50 });
  expect(once.length).toBeGreaterThan(10);
  expect(twice.map((h) => h.doc)).toEqual(once.map((h) => h.doc));
  twice.forEach((h, i) => expect(h.score).toBeCloseTo(2 * once[i]!.score, 12));
  // And against another word, it now counts double.
  expect(searchIndex(storage, 't', { terms: ['w3x', 'w5x', 'w3x'], phrases: [] }, { k: 10 })).toEqual(oracleSearch(docs, { terms: ['w3x', 'w5x', 'w3x'], phrases: [] }, 10));
});

test('phrases match words in order within one field, and count each place they start', () => {
  const storage = new MemoryPostingStorage();
  const docs: SearchDocument[] = [
    { doc: 1, title: 'dark mode', body: 'the user prefers it' },
    { doc: 2, title: 'mode dark', body: 'dark and then mode' },
    { doc: 3, title: 'dark', body: 'mode. Dark modes everywhere, dark mode' },
  ];
  addDocuments(storage, 't', docs);
  const hits = searchIndex(storage, 't', { terms: [], phrases: [['dark', 'mode']] }, { k: 10 });
  expect(hits.map((h) => h.doc)).toEqual([1, 3]);
  expect(hits).toEqual(oracleSearch(docs, { terms: [], phrases: [['dark', 'mode']] }, 10));
});

test("a query word no record of the tenant holds divides the bound by the square of the share of the query's weight the tenant holds", () => {
  const docs: SearchDocument[] = [
    { doc: 1, title: 'dark mode', body: 'the user prefers it' },
    { doc: 2, title: 'light theme', body: 'in the mornings' },
    { doc: 3, title: 'font size', body: 'larger on the laptop' },
  ];
  const storage = new MemoryPostingStorage();
  addDocuments(storage, 't', docs);
  const { k1, proximity } = DEFAULT_RANKING;
  const dark = idf(3, 1);
  const zebra = idf(3, 0);
  const held = searchScored(storage, 't', { terms: ['dark'], phrases: [] }, { k: 5 });
  expect(held.best).toBe(dark * (k1 + 1));
  // "zebra" is in no record: it counts at the highest IDF, its pair with "dark" at proximity's weight, and
  // then the bound is divided by (dark / (dark + zebra))².
  const missing = searchScored(storage, 't', { terms: ['dark', 'zebra'], phrases: [] }, { k: 5 });
  const plain = (dark + zebra) * (k1 + 1) + proximity * (dark + zebra) * (k1 + 1);
  expect(missing.best).toBeCloseTo(plain / (dark / (dark + zebra)) ** HELD_SHARE_POWER, 12);
  expect(missing.best).toBe(oracleBest(docs, { terms: ['dark', 'zebra'], phrases: [] }));
  // The same record, the same score: its rank falls by the held share squared, and more.
  expect(missing.hits[0]!.score).toBe(held.hits[0]!.score);
  expect(missing.hits[0]!.score / missing.best).toBeLessThan(((held.hits[0]!.score / held.best) * dark) / (dark + zebra));
});

test('words next to each other in the query rank a record that holds them next to each other, in order, above one that holds them apart', () => {
  // The same words, the same lengths: only where the two words stand differs.
  const docs: SearchDocument[] = [
    { doc: 1, title: 'release notes', body: 'the freeze on every deploy starts friday' },
    { doc: 2, title: 'release notes', body: 'the deploy freeze starts on every friday' },
    { doc: 3, title: 'release notes', body: 'on friday the freeze deploy starts every' },
    { doc: 4, title: 'release notes', body: 'every deploy on friday starts the freeze' },
  ];
  const storage = new MemoryPostingStorage();
  addDocuments(storage, 't', docs);
  const query = { terms: ['deploy', 'freeze'], phrases: [] };
  const hits = searchIndex(storage, 't', query, { k: 10 });
  expect(hits[0]!.doc).toBe(2);
  // The three others tie: apart, or next to each other in the other order, is no proximity.
  expect(new Set(hits.slice(1).map((h) => h.score)).size).toBe(1);
  expect(hits).toEqual(oracleSearch(docs, query, 10));
  // It is proximity alone: without it every record scores the same.
  const flat = searchIndex(storage, 't', query, { k: 10, ranking: { ...DEFAULT_RANKING, proximity: 0 } });
  expect(new Set(flat.map((h) => h.score)).size).toBe(1);
  expect(hits[0]!.score).toBeGreaterThan(flat[0]!.score);
  // The bound counts the pair, so the rank of the best match stays below 1.
  const { best } = searchScored(storage, 't', query, { k: 10 });
  expect(best).toBe(oracleBest(docs, query));
  expect(hits[0]!.score).toBeLessThan(best);
  // Across an identifier: the identifier's last word and the next word.
  addDocuments(storage, 't', [
    { doc: 5, title: 'invoice', body: 'INV-2024-0042 paid in full by the customer' },
    { doc: 6, title: 'invoice', body: 'INV-2024-0042 was in full paid by the customer' },
  ]);
  expect(searchIndex(storage, 't', { terms: ['INV-2024-0042', 'paid'], phrases: [] }, { k: 2 }).map((h) => h.doc)).toEqual([5, 6]);
});

test('phrases that repeat a word, or run long, over records of few words repeated, equal the oracle, in the index and in the tail', () => {
  const random = prng(11);
  const words = ['x', 'y', 'z'];
  const text = (n: number) => Array.from({ length: n }, () => words[Math.floor(random() ** 2 * words.length)]!).join(' ');
  // Long fields of a few words: every phrase has many places to start, most of them false.
  const docs: SearchDocument[] = Array.from({ length: 300 }, (_, i) => ({ doc: i + 1, title: text(1 + Math.floor(random() * 6)), body: text(Math.floor(random() * 400)) }));
  const storage = new MemoryPostingStorage();
  addDocuments(storage, 't', docs.slice(0, 200));
  storage.setMergedUpTo(200);
  const tail = new TenantTail();
  for (const d of docs.slice(200)) tail.add(d);
  const phrases = [['x', 'x'], ['x', 'x', 'x', 'x'], ['x', 'y', 'x'], ['y', 'y', 'y'], Array(32).fill('x'), ['z', 'x', 'z', 'x', 'z'], ['x', 'z', 'z', 'x']];
  for (const phrase of phrases) {
    for (const query of [{ terms: [], phrases: [phrase] }, { terms: ['y'], phrases: [phrase] }]) {
      const got = searchIndex(storage, 't', query, { k: 20, tail });
      expect({ query, got }).toEqual({ query, got: oracleSearch(docs, query, 20) });
    }
  }
});

test("what a search may read at most (searchCost): every term's postings once, and each phrase word's positions, each time the phrase names it", () => {
  const docs: SearchDocument[] = [
    { doc: 1, title: 'dark mode', body: 'x x x x dark' },
    { doc: 2, title: 'x', body: 'mode x y' },
    { doc: 3, title: 'light', body: 'x' },
  ];
  const storage = new MemoryPostingStorage();
  addDocuments(storage, 't', docs.slice(0, 2));
  storage.setMergedUpTo(2);
  const tail = new TenantTail();
  tail.add(docs[2]!);
  const cost = (query: TextQuery, limit?: number) => searchCost(storage, 't', clausesOf(query), tail, limit);
  // Terms: their document frequencies, each term once (dark 1, mode 2, x 3).
  expect(cost({ terms: ['dark', 'dark'], phrases: [] })).toBe(1);
  // Words next to each other in the query are also a pair, read at the best documents only: each word's
  // most positions in one document times its documents (dark: 2 in one, mode: 1 in each of 2).
  expect(cost({ terms: ['dark', 'mode'], phrases: [] })).toBe(1 + 2 + (1 * 2 + 2 * 1) * POSITION_COST);
  expect(searchCost(storage, 't', clausesOf({ terms: ['dark', 'mode'], phrases: [] }), tail, Infinity, 1)).toBe(1 + 2 + (1 * 2 + 1 * 1) * POSITION_COST);
  expect(cost({ terms: ['x'], phrases: [] })).toBe(3);
  // A phrase adds its words' positions: x has 4 + 2 + 1 = 7, the phrase names it three times.
  expect(cost({ terms: [], phrases: [['x', 'x', 'x']] })).toBe(3 + 3 * 7 * POSITION_COST);
  expect(cost({ terms: [], phrases: [['dark', 'mode']] })).toBe(1 + 2 + (2 + 2) * POSITION_COST);
  // Past the limit it stops counting.
  expect(cost({ terms: [], phrases: [Array(32).fill('x')] }, 4)).toBeGreaterThan(4);
  expect(cost({ terms: [], phrases: [Array(32).fill('x')] }, 4)).toBeLessThan(3 + 32 * 7 * POSITION_COST);
});

test("a search's cost bounds the positions its phrases hold, from the sealed blocks' metas, and copies none of the tail's", () => {
  const random = prng(3);
  const docs: SearchDocument[] = Array.from({ length: 700 }, (_, i) => ({ doc: i + 1, title: 'note', body: Array.from({ length: 1 + Math.floor(random() * 30) }, () => (random() < 0.5 ? 'x' : 'y')).join(' ') }));
  const storage = new MemoryPostingStorage();
  addDocuments(storage, 't', docs.slice(0, 600));
  storage.setMergedUpTo(600);
  const tail = new TenantTail();
  for (const d of docs.slice(600)) tail.add(d);
  const copies = jest.spyOn(tail, 'postings');
  const positions = (word: string) => docs.reduce((n, d) => n + analyze(`${d.title} ${d.body}`).filter((t) => t === word).length, 0);
  const dfs = (word: string) => docs.filter((d) => analyze(`${d.title} ${d.body}`).includes(word)).length;
  const cost = searchCost(storage, 't', clausesOf({ terms: [], phrases: [['x', 'y', 'x']] }), tail);
  const truth = dfs('x') + dfs('y') + (2 * positions('x') + positions('y')) * POSITION_COST;
  expect(cost).toBeGreaterThanOrEqual(truth);
  // A bound from the metas (a block's count times its largest counts), within a small factor of the truth
  // here, where counts vary from 1 to about 25 within a block.
  expect(cost).toBeLessThan(3 * truth);
  expect(copies).not.toHaveBeenCalled();
});
