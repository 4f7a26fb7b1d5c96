import { ClauseCursor } from './cursor.js';
import { FilterClause, type Filter } from './filter.js';
import { positionStart, type Block, type ScoreColumns } from './block.js';
import { contains, indexOf, lowerBound, phrasePostings, termPostings, type TermPostings } from './postings.js';
import { fullColumns, type FullColumns } from './sealed.js';
import { clauseBoost, clausesOf, type Clause, type TextQuery } from './query.js';
import { DEFAULT_RANKING, type Bm25Params } from './ranking.js';
import { clauseScore, clauseWeight, idf, surelyBelowOf, type ClauseWeight, type CollectionStats } from './scoring.js';
import { bestScore } from './best.js';
import type { PostingStorage } from './storage.js';
import { EMPTY_TAIL, type Tail } from './tail.js';
import { heldOf, holds, TopK, type Entry, type ScoredDoc } from './top-k.js';

/** How to search: how many documents, which of them (the filter), with what ranking, and the tail. */
export interface SearchOptions {
  /** How many documents to return at most. */
  k: number;
  /**
   * The filter clause (a clause of Lucene's BooleanQuery with Occur.FILTER): only the documents it passes
   * are returned, and it adds nothing to a score. How it is read, and what that costs, is filter.ts's.
   */
  filter?: Filter;
  /** What to score with; DEFAULT_RANKING (ranking.ts) unless given. */
  ranking?: Bm25Params;
  /** The tenant's documents above the merge mark, which the index does not hold yet (tail.ts); none unless given. */
  tail?: Tail;
}

/** The cursors of a query's clauses in one tenant; a clause with a term the tenant never used matches nothing and is left out. */
function cursorsOf(
  storage: PostingStorage,
  tenant: string,
  stats: CollectionStats,
  clauses: readonly Clause[],
  ranking: Bm25Params,
  tail: Tail,
  read: Map<string, TermPostings | null>,
): ClauseCursor[] {
  const cursors: ClauseCursor[] = [];
  const upTo = storage.mergedUpTo();
  // A term that several clauses or a phrase's several words name is read once (phrasePostings counts on it);
  // `read` keeps every term of every clause (a pair's are the query's words, clauses of their own), so the
  // caller has each one's document frequency.
  const postingsOf = (term: string) => {
    if (!read.has(term)) read.set(term, termPostings(storage, tenant, term, tail, upTo, ranking.titleWeight));
    return read.get(term)!;
  };
  clauses.forEach((clause, order) => {
    // Pairs of adjacent words are read at the best documents only (`withProximity`).
    if (clause.adjacent) return;
    const parts = clause.terms.map(postingsOf);
    if (parts.some((p) => p === null)) return;
    const present = parts as TermPostings[];
    const weight = weightOf(clause, present, stats, ranking);
    if (present.length === 1) {
      cursors.push(new ClauseCursor(order, weight, present[0]!.metas, present[0]!.load, present[0]!.df, present[0]!.loadDocs));
      return;
    }
    // A phrase's blocks are made when read (postings.ts), into arrays of their own.
    const phrase = phrasePostings(present, weight);
    cursors.push(new ClauseCursor(order, weight, phrase.metas, phrase.load, Math.min(...present.map((p) => p.df)), undefined, phrase.lookup));
  });
  return cursors;
}

/**
 * A clause's weight: a phrase weighs the sum of its terms' IDFs, as Lucene's PhraseQuery does (no count of
 * the phrase's documents is needed, so a phrase costs what its rarest term costs), times its boost (a clause
 * the query names n times weighs n times as much, a pair of adjacent words `proximity` times: query.ts).
 */
function weightOf(clause: Clause, parts: readonly TermPostings[], stats: CollectionStats, ranking: Bm25Params) {
  return clauseWeight(ranking, stats, clauseBoost(clause, ranking) * parts.reduce((sum, p) => sum + idf(stats.docs, p.df), 0));
}

/** Bounds are compared with this much room, so that rounding in a sum never prunes a document that ties. */
const SLACK = 1e-9;
const below = (bound: number, threshold: number) => bound * (1 + SLACK) < threshold;

/**
 * The k documents of the tenant that score best for the query, best first; equal scores newest (highest
 * number) first. Exact: the same documents, scores and order as scoring every match (the tests' oracle).
 *
 * Block-max MaxScore, after Lucene's MaxScoreBulkScorer:
 * - The clauses whose largest bounds together cannot reach the k-th best score so far cannot make a document
 *   enter on their own: a document needs one of the others, the lead clauses. The documents are visited in
 *   windows that end where the first of the lead clauses' current blocks ends, so a window has one block
 *   of each lead clause, and the rarer the lead clauses, the fewer the windows.
 * - In a window each clause is bounded by the largest bound of its blocks there. A window whose bounds
 *   cannot reach the k-th best score is skipped unread. Otherwise the clauses whose window bounds together
 *   cannot reach it are non-essential: only the essential clauses' documents are candidates, and a
 *   non-essential clause is read for a candidate only while the candidate can still make it.
 * - The filter is asked only about a document that would enter the top k, and about a window only when it
 *   would be scored; when it can list few enough documents, only those are scored (filter.ts).
 * The work grows with k and with how rare the query's best words are, not with the number of matches.
 */
export function searchIndex(storage: PostingStorage, tenant: string, query: TextQuery, options: SearchOptions): ScoredDoc[] {
  return searchScored(storage, tenant, query, options).hits;
}

/**
 * searchIndex's hits, and the most the query could score in the tenant (best.ts), which the rank divides
 * by (shared/domain/rank.ts); `best` is 0 when the tenant has no documents.
 */
export function searchScored(storage: PostingStorage, tenant: string, query: TextQuery, options: SearchOptions): { hits: ScoredDoc[]; best: number } {
  const tail = options.tail ?? EMPTY_TAIL;
  const stats = addStats(storage.stats(tenant), tail.stats);
  if (stats.docs === 0) return { hits: [], best: 0 };
  const ranking = options.ranking ?? DEFAULT_RANKING;
  const clauses = clausesOf(query);
  const read = new Map<string, TermPostings | null>();
  const cursors = cursorsOf(storage, tenant, stats, clauses, ranking, tail, read);
  const best = bestScore(clauses, stats, (term) => read.get(term)?.df ?? 0, ranking);
  if (options.k <= 0) return { hits: [], best };
  const pairs = ranking.proximity > 0 ? clauses.filter((c) => c.adjacent) : [];
  if (pairs.length === 0) return { hits: topOf(cursors, clauses.length, stats, options).sorted(), best };
  const window = topOf(cursors, clauses.length, stats, { ...options, k: Math.max(options.k, PROXIMITY_WINDOW) }).sortedHeld();
  return { hits: withProximity(window, clauses, stats, ranking, read).slice(0, options.k), best };
}

/**
 * How many of the best documents by the query's words are ranked again with proximity, at least: a search
 * for k documents ranks max(k, PROXIMITY_WINDOW) of them again and keeps the best k, so the top k of every
 * k up to this many is the start of the same list.
 */
export const PROXIMITY_WINDOW = 20;

/**
 * Proximity, as a second ranking of the best documents by the words alone (Elasticsearch's rescore, Vespa's
 * second phase): each pair of adjacent words (query.ts) adds its phrase's score in the documents of
 * `window` that hold it, and the window is sorted again (equal scores: the higher number first). A pair
 * is read only at those of them that hold both its words (the first ranking tells, `Entry.held`), each word
 * once however many pairs name it, so it costs what a few blocks cost, however common the words are;
 * scoring the pairs at every document, as clauses of the search, measured three times slower on two common
 * words. The pairs' scores are added after the words', in the query's order, as the oracle adds them.
 */
function withProximity(window: readonly Entry[], clauses: readonly Clause[], stats: CollectionStats, ranking: Bm25Params, read: Map<string, TermPostings | null>): ScoredDoc[] {
  const byDoc = [...window].sort((a, b) => a.doc - b.doc);
  // Each word's own clause, by which the first ranking tells whether a record holds the word: a record is
  // read for a pair only when it holds both words.
  const wordClause = new Map<string, number>();
  clauses.forEach((c, order) => {
    if (!c.adjacent && c.terms.length === 1) wordClause.set(c.terms[0]!, order);
  });
  const holdsWord = (hit: Entry, term: string) => holds(hit.held, wordClause.get(term) ?? Infinity);
  // Every term of a pair is one of the query's term clauses (query.ts), so `read` has it; one absent from
  // the tenant leaves its pairs out.
  const pairs = clauses.flatMap((pair) => {
    if (!pair.adjacent) return [];
    const parts = pair.terms.map((term) => read.get(term) ?? null);
    if (parts.some((p) => p === null)) return [];
    const docs = new Set(byDoc.filter((hit) => pair.terms.every((t) => holdsWord(hit, t))).map((hit) => hit.doc));
    return [{ terms: pair.terms, parts: parts as TermPostings[], weight: weightOf(pair, parts as TermPostings[], stats, ranking), docs }];
  });
  // Each word read once, at the records where one of its pairs is read.
  const readers = new Map<string, FieldPositions>();
  for (const pair of pairs) {
    pair.terms.forEach((term, j) => {
      if (readers.has(term)) return;
      const at = byDoc.filter((hit) => pairs.some((p) => p.terms.includes(term) && p.docs.has(hit.doc))).map((hit) => hit.doc);
      readers.set(term, new FieldPositions(pair.parts[j]!, at));
    });
  }
  const ranked = byDoc.map((hit) => {
    let score = hit.score;
    for (const pair of pairs) {
      if (!pair.docs.has(hit.doc)) continue;
      const words = pair.terms.map((term) => readers.get(term)!);
      for (const w of words) w.moveTo(hit.doc);
      if (!words.every((w) => w.found)) continue;
      score += clauseScore(pair.weight, phraseCount(words, true), phraseCount(words, false), words[0]!.lenT, words[0]!.lenB);
    }
    return { doc: hit.doc, score };
  });
  return ranked.sort((a, b) => b.score - a.score || b.doc - a.doc);
}

/**
 * One term's positions in a few documents, asked in increasing order: the blocks that hold them are read
 * at once when it is made (one read for the sealed ones, however far apart), and each is decoded when its
 * first document is asked, into arrays the reader keeps.
 */
class FieldPositions {
  /** The blocks, by their index among the term's. */
  private readonly blocks = new Map<number, (into: FullColumns) => Block>();
  private readonly scratch = fullColumns();
  private index = 0;
  private decoded = -1;
  private block: Block | null = null;
  /** Whether the document last moved to holds the term, and where its positions are in `block`. */
  found = false;
  private start = 0;
  tfT = 0;
  tfB = 0;
  lenT = 0;
  lenB = 0;

  constructor(
    private readonly postings: TermPostings,
    docs: readonly number[],
  ) {
    const { metas } = postings;
    const wanted: number[] = [];
    let i = 0;
    for (const doc of docs) {
      while (i < metas.length && metas.last[i]! < doc) i++;
      if (i < metas.length && metas.first[i]! <= doc && wanted[wanted.length - 1] !== i) wanted.push(i);
    }
    postings.loadFullMany(wanted).forEach((block, k) => this.blocks.set(wanted[k]!, block));
  }

  moveTo(doc: number): void {
    const { metas } = this.postings;
    while (this.index < metas.length && metas.last[this.index]! < doc) this.index++;
    this.found = false;
    const load = this.blocks.get(this.index);
    if (load === undefined || metas.first[this.index]! > doc) return;
    if (this.decoded !== this.index) {
      this.block = load(this.scratch);
      this.decoded = this.index;
    }
    const b = this.block!;
    const i = indexOf(b.docs, b.count, doc);
    if (i < 0) return;
    this.found = true;
    this.start = positionStart(b, i);
    this.tfT = b.tfT[i]!;
    this.tfB = b.tfB[i]!;
    this.lenT = b.lenT[i]!;
    this.lenB = b.lenB[i]!;
  }

  /** The term's sorted positions in the title or the body of the document moved to. */
  positions(title: boolean): Uint16Array {
    const from = this.start + (title ? 0 : this.tfT);
    return this.block!.positions.subarray(from, from + (title ? this.tfT : this.tfB));
  }
}

/** How many places in one field the words stand one after another, in order (a pair is two words, an identifier's more). */
function phraseCount(words: readonly FieldPositions[], title: boolean): number {
  const lists = words.map((w) => w.positions(title));
  let count = 0;
  starts: for (const p of lists[0]!) {
    for (let j = 1; j < lists.length; j++) if (!contains(lists[j]!, 0, lists[j]!.length, p + j)) continue starts;
    count++;
  }
  return count;
}


/** The top k of the query's clauses' cursors (searchIndex's comment says how). */
function topOf(cursors: ClauseCursor[], order: number, stats: CollectionStats, options: SearchOptions): TopK {
  const top = new TopK(options.k);
  const filter = options.filter ? new FilterClause(options.filter, stats.docs) : null;
  if (filter && cursors.length > 0) {
    const lead = filter.lead(cursors.reduce((n, c) => n + c.postings, 0), cursors.length);
    if (lead) {
      scoreAmong(lead, cursors, order, top, filter);
      return top;
    }
  }
  const byMax = [...cursors].sort((a, b) => a.maxBound - b.maxBound);
  const scratch = new WindowScratch(cursors.length, order);
  let start = 0;
  for (;;) {
    const threshold = top.threshold;
    // The lead clauses: all of them until the top k is full.
    let firstLead = 0;
    if (top.full) {
      let sum = 0;
      while (firstLead < byMax.length && below(sum + byMax[firstLead]!.maxBound, threshold)) sum += byMax[firstLead++]!.maxBound;
    }
    let end = Infinity;
    let from = Infinity;
    for (let i = firstLead; i < byMax.length; i++) {
      const c = byMax[i]!;
      c.seek(start);
      if (c.exhausted) continue;
      const last = c.metas.last[c.index]!;
      const first = c.metas.first[c.index]!;
      if (last < end) end = last;
      if (first < from) from = first;
    }
    // No lead clause has a document left: nothing else can enter.
    if (end === Infinity) break;
    // No lead clause has a document before `from`.
    if (from > start) start = from;
    let total = 0;
    let inWindow = 0;
    for (const c of cursors) {
      const bound = c.windowBound(start, end);
      if (bound === 0) continue;
      scratch.cursors[inWindow] = c;
      scratch.bounds[inWindow++] = bound;
      total += bound;
    }
    const worth = !top.full || !below(total, threshold);
    if (worth && (!filter || filter.mayAcceptIn(start, end))) scoreWindow(start, end, scratch, inWindow, top, filter);
    start = end + 1;
  }
  return top;
}

/** The index's statistics and the tail's together. */
function addStats(index: CollectionStats | null, tail: CollectionStats): CollectionStats {
  if (!index) return tail;
  return { docs: index.docs + tail.docs, titleWords: index.titleWords + tail.titleWords, bodyWords: index.bodyWords + tail.bodyWords };
}

/** The arrays a search reuses from window to window. */
class WindowScratch {
  /** The clauses with documents in the window, and their bounds there; then sorted, non-essential first. */
  readonly cursors: ClauseCursor[];
  readonly bounds: Float64Array;
  /** Each clause's score in the current candidate, by its place in the query. */
  readonly contributions: Float64Array;
  /** What the non-essential clauses from the i-th on can still add. */
  readonly rest: Float64Array;
  /** Each essential clause's block, its index and the position in it. */
  readonly blocks: ScoreColumns[];
  readonly blockIndex: Int32Array;
  readonly position: Int32Array;
  /** What the essential clause's score must reach for a document to be a candidate (-Infinity: anything). */
  floor = -Infinity;

  constructor(clauses: number, order: number) {
    this.cursors = new Array<ClauseCursor>(clauses);
    this.bounds = new Float64Array(clauses);
    this.contributions = new Float64Array(order);
    this.rest = new Float64Array(clauses + 1);
    this.blocks = new Array<ScoreColumns>(clauses);
    this.blockIndex = new Int32Array(clauses);
    this.position = new Int32Array(clauses);
  }
}

const NO_DOCS: ScoreColumns = { count: 0, docs: new Uint32Array(0), tfT: new Uint16Array(0), tfB: new Uint16Array(0), lenT: new Uint16Array(0), lenB: new Uint16Array(0) };

/**
 * Scores the candidates of one window [start, end]: the documents of its essential clauses, which are the
 * last `count - split` of `s.cursors` once sorted by their bounds in the window.
 */
function scoreWindow(start: number, end: number, s: WindowScratch, count: number, top: TopK, filter: FilterClause | null): void {
  // Sort the window's clauses by bound, smallest first (insertion sort: a query has a few clauses).
  for (let i = 1; i < count; i++) {
    const c = s.cursors[i]!;
    const b = s.bounds[i]!;
    let j = i - 1;
    for (; j >= 0 && s.bounds[j]! > b; j--) {
      s.cursors[j + 1] = s.cursors[j]!;
      s.bounds[j + 1] = s.bounds[j]!;
    }
    s.cursors[j + 1] = c;
    s.bounds[j + 1] = b;
  }
  // The non-essential prefix: clauses whose bounds together cannot make a document enter.
  let split = 0;
  if (top.full) {
    let prefix = 0;
    while (split < count && below(prefix + s.bounds[split]!, top.threshold)) prefix += s.bounds[split++]!;
  }
  // What the non-essential clauses can still add, the strongest first: rest[i] for clauses split-1-i down to 0.
  const nonEssential = split;
  s.rest[nonEssential] = 0;
  for (let i = 0; i < nonEssential; i++) s.rest[nonEssential - 1 - i] = s.rest[nonEssential - i]! + s.bounds[i]!;
  // The essential clauses' first blocks in the window. With one, a document is a candidate only if its
  // score reaches `floor` (scoreOneEssential), and a phrase's block leaves out those that could not.
  const essential = count - split;
  s.floor = essential === 1 && top.full ? floorOf(top.threshold, s.rest[0]!) : -Infinity;
  for (let e = 0; e < essential; e++) {
    const c = s.cursors[split + e]!;
    c.seek(start);
    s.blockIndex[e] = c.index;
    if (c.index < c.metas.length && c.metas.first[c.index]! <= end) {
      const b = c.block(c.index, s.floor);
      s.blocks[e] = b;
      s.position[e] = lowerBound(b.docs, b.count, start);
      nextBlockIfDone(s, c, e, end);
    } else s.blocks[e] = NO_DOCS;
  }
  if (essential === 1) {
    scoreOneEssential(end, s, split, top, filter);
    return;
  }
  const contributions = s.contributions;
  // The top k's state, read again only after an offer, the one thing that changes it.
  let full = top.full;
  let threshold = top.threshold;
  for (;;) {
    let doc = Infinity;
    for (let e = 0; e < essential; e++) {
      const b = s.blocks[e]!;
      const p = s.position[e]!;
      if (p < b.count && b.docs[p]! < doc) doc = b.docs[p]!;
    }
    if (doc > end) return;
    contributions.fill(0);
    let partial = 0;
    for (let e = 0; e < essential; e++) {
      const b = s.blocks[e]!;
      const p = s.position[e]!;
      if (p < b.count && b.docs[p] === doc) {
        const c = s.cursors[split + e]!;
        const score = c.scoreAt(b, p);
        contributions[c.order] = score;
        partial += score;
        s.position[e] = p + 1;
        if (p + 1 === b.count) nextBlockIfDone(s, c, e, end);
      }
    }
    if (finishCandidate(doc, partial, s, split, top, full, threshold, filter)) {
      full = top.full;
      threshold = top.threshold;
    }
  }
}

/**
 * The window's candidates when one clause is essential, the usual case once the top k has filled: its
 * documents in order, each dropped at once unless its score and the rest's bounds can make it enter.
 */
function scoreOneEssential(end: number, s: WindowScratch, split: number, top: TopK, filter: FilterClause | null): void {
  const c = s.cursors[split]!;
  const w = c.weight;
  const most = s.rest[0]!;
  const contributions = s.contributions;
  // The top k changes only when a candidate is offered: its state is read again after each. Most postings
  // are dropped by the bound, which is tested first without the score's division (`nextAbove`), against a
  // floor lower than the bound's by far more than either rounds; those it keeps are tested exactly.
  let full = top.full;
  let threshold = top.threshold;
  let floor = s.floor;
  for (;;) {
    const b = s.blocks[0]!;
    const { docs, tfT, tfB, lenT, lenB } = b;
    for (let p = s.position[0]!; p < b.count; p++) {
      // Once the top k is full, on to the next posting that may reach the floor (or is past the window).
      if (full && (p = nextAbove(b, p, end, w, floor)) === b.count) break;
      const doc = docs[p]!;
      if (doc > end) return;
      const score = clauseScore(w, tfT[p]!, tfB[p]!, lenT[p]!, lenB[p]!);
      if (full && below(score + most, threshold)) continue;
      for (let i = 0; i < contributions.length; i++) contributions[i] = 0;
      contributions[c.order] = score;
      if (finishCandidate(doc, score, s, split, top, full, threshold, filter)) {
        full = top.full;
        threshold = top.threshold;
        floor = floorOf(threshold, most);
      }
    }
    s.position[0] = b.count;
    nextBlockIfDone(s, c, 0, end);
    if (s.blocks[0] === NO_DOCS) return;
  }
}

/**
 * The first posting of `b` from `p` on that is past `end` or not surely below `floor` (`surelyBelowOf`);
 * `b.count` if none. The loop over most of a common word's postings: it reads the weight's constants once,
 * where reading them from the weight at each posting cost some 3 to 14 % of a search of common words
 * (bench/engine-profile.ts --ab at a million records, five runs: 0.86 to 0.97 of the time).
 */
function nextAbove(b: ScoreColumns, p: number, end: number, w: ClauseWeight, floor: number): number {
  const { count, docs, tfT, tfB, lenT, lenB } = b;
  const { titleWeight, top, norm, perWord } = w;
  for (; p < count; p++) if (docs[p]! > end || !surelyBelowOf(titleWeight, top, norm, perWord, tfT[p]!, tfB[p]!, lenT[p]!, lenB[p]!, floor)) return p;
  return count;
}

/**
 * The floor `surelyBelow` tests the essential clause's score against: lower than the exact one, threshold /
 * (1 + SLACK) − most, by 1e-7 of the threshold, where rounding moves these sums by some 1e-16 of their
 * size. So a score it drops would fail `below`'s test too, and those near the floor are tested exactly.
 */
const floorOf = (threshold: number, most: number) => threshold / (1 + SLACK) - most - 1e-7 * threshold;

/**
 * Adds the non-essential clauses' scores to a candidate whose essential clauses add up to `partial`, the
 * strongest first and each only while the candidate can still enter (by the bound of the very block that
 * would hold it), then offers it to the top k; true when it did. `full` and `threshold` are the top k's
 * state, which the caller keeps and reads again only after an offer: read from the top k at each
 * candidate, its getters (which V8 did not inline here) took some 5 % of a search of common words.
 */
function finishCandidate(doc: number, partial: number, s: WindowScratch, split: number, top: TopK, full: boolean, threshold: number, filter: FilterClause | null): boolean {
  const contributions = s.contributions;
  for (let i = 0; i < split; i++) {
    if (full && below(partial + s.rest[i]!, threshold)) return false;
    const c = s.cursors[split - 1 - i]!;
    const bound = c.boundAt(doc);
    if (bound === 0) continue;
    if (full && below(partial + bound + s.rest[i + 1]!, threshold)) return false;
    const score = c.scoreOf(doc);
    contributions[c.order] = score;
    partial += score;
  }
  // The score as the oracle sums it: clause by clause, in the query's order.
  let score = 0;
  for (let i = 0; i < contributions.length; i++) score += contributions[i]!;
  if (full && score < threshold) return false;
  if (filter && !filter.accepts(doc)) return false;
  top.offer(doc, score, heldOf(contributions));
  return true;
}

/** When essential clause `e` has read its block, moves it to its next block if that one starts in the window. */
function nextBlockIfDone(s: WindowScratch, c: ClauseCursor, e: number, end: number): void {
  while (s.position[e]! >= s.blocks[e]!.count) {
    const next = s.blockIndex[e]! + 1;
    if (next >= c.metas.length || c.metas.first[next]! > end) {
      s.blocks[e] = NO_DOCS;
      s.position[e] = 0;
      return;
    }
    s.blockIndex[e] = next;
    s.blocks[e] = c.block(next, s.floor);
    s.position[e] = 0;
  }
}

/**
 * The top k among the given documents (the filter's, when it leads), in increasing order: each document is
 * skipped by its blocks' bounds once the top k is full, and otherwise scored clause by clause, in the
 * query's order, as the oracle sums it.
 */
function scoreAmong(docs: Uint32Array, cursors: readonly ClauseCursor[], order: number, top: TopK, filter: FilterClause): void {
  const contributions = new Float64Array(order);
  for (let d = 0; d < docs.length; d++) {
    const doc = docs[d]!;
    if (top.full) {
      let bound = 0;
      for (const c of cursors) bound += c.boundAt(doc);
      if (below(bound, top.threshold)) continue;
    }
    contributions.fill(0);
    let found = false;
    for (const c of cursors) {
      const score = c.scoreOf(doc);
      if (score === 0) continue;
      contributions[c.order] = score;
      found = true;
    }
    if (!found) continue;
    let score = 0;
    for (let i = 0; i < order; i++) score += contributions[i]!;
    if (top.full && score < top.threshold) continue;
    if (!filter.accepts(doc)) continue;
    top.offer(doc, score, heldOf(contributions));
  }
}
