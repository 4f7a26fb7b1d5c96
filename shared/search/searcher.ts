import { analyze } from './analyzer.js';
import { IMPACT_WEIGHT, decodeBlock, decodeMetas, metaOfBlock, positionStart, type Block, type BlockMeta } from './block.js';
import { clauseScore, clauseWeight, idf, RANKING, type Bm25Params, type ClauseWeight, type CollectionStats } from './scoring.js';
import type { PostingStorage } from './storage.js';
import { EMPTY_TAIL, type Tail } from './tail.js';

/** What to look for: words (any of them) and phrases (each word in order), as the query parser gives them. */
export interface TextQuery {
  terms: readonly string[];
  phrases: readonly (readonly string[])[];
}

export interface ScoredDoc {
  doc: number;
  score: number;
}

export interface SearchOptions {
  /** How many documents to return at most. */
  k: number;
  /** Only documents it accepts are returned (the record filters); called only for a document that would enter the top k. */
  accept?: (doc: number) => boolean;
  params?: Bm25Params;
  /** The tenant's documents above the merge mark, which the index does not hold yet (tail.ts); none unless given. */
  tail?: Tail;
}

/**
 * A clause of the query as the index reads it: a term, or a phrase of terms. Each word of the query's
 * terms may analyze to more than one term ("e-mail"); each becomes a clause, once.
 */
export interface Clause {
  /** The terms: one for a term clause, two or more for a phrase. */
  terms: string[];
}

/** The clauses of a query, in a fixed order (phrases first, then terms), the order scores are summed in. */
export function clausesOf(query: TextQuery): Clause[] {
  const clauses: Clause[] = [];
  const seen = new Set<string>();
  const add = (terms: string[]) => {
    const key = terms.join(' ');
    if (terms.length === 0 || seen.has(key)) return;
    seen.add(key);
    clauses.push({ terms });
  };
  for (const phrase of query.phrases) add(analyze(phrase.join(' ')));
  for (const word of query.terms) for (const term of analyze(word)) add([term]);
  return clauses;
}

/** A column block, decoded: what a cursor scores from. Positions only for blocks read from the index. */
type Columns = Pick<Block, 'count' | 'docs' | 'tfT' | 'tfB' | 'lenT' | 'lenB'>;

/** One clause's postings, block by block, with an upper bound on the score of each block. */
class ClauseCursor {
  readonly bounds: Float64Array;
  readonly maxBound: number;
  /** The current block: the first whose last document is at or after the window's start. */
  index = 0;
  private loaded = -1;
  private columns: Columns | null = null;

  constructor(
    readonly order: number,
    readonly weight: ClauseWeight,
    readonly metas: readonly BlockMeta[],
    private readonly load: (i: number) => Columns,
  ) {
    this.bounds = new Float64Array(metas.length);
    let max = 0;
    metas.forEach((m, i) => {
      this.bounds[i] = blockBound(weight, m);
      max = Math.max(max, this.bounds[i]!);
    });
    this.maxBound = max;
  }

  get exhausted(): boolean {
    return this.index >= this.metas.length;
  }

  /** Moves to the first block that ends at or after `doc`. */
  seek(doc: number): void {
    while (this.index < this.metas.length && this.metas[this.index]!.last < doc) this.index++;
  }

  block(): Columns {
    if (this.loaded !== this.index) {
      this.columns = this.load(this.index);
      this.loaded = this.index;
    }
    return this.columns!;
  }

  /** The clause's score in `doc`, which lies in the current block's range, or 0 if the block does not hold it. */
  scoreOf(doc: number): number {
    const b = this.block();
    const i = indexOf(b.docs, doc);
    return i < 0 ? 0 : clauseScore(this.weight, b.tfT[i]!, b.tfB[i]!, b.lenT[i]!, b.lenB[i]!);
  }

  scoreAt(b: Columns, i: number): number {
    return clauseScore(this.weight, b.tfT[i]!, b.tfB[i]!, b.lenT[i]!, b.lenB[i]!);
  }
}

/** The most a document of the block can score: exact from its impacts, or from its extremes for another title weight. */
function blockBound(w: ClauseWeight, m: BlockMeta): number {
  if (w.titleWeight !== IMPACT_WEIGHT || m.impacts.length === 0) return clauseScore(w, m.maxTfT, m.maxTfB, m.minLenT, m.minLenB);
  let best = 0;
  for (let i = 0; i < m.impacts.length; i += 4) best = Math.max(best, clauseScore(w, m.impacts[i]!, m.impacts[i + 1]!, m.impacts[i + 2]!, m.impacts[i + 3]!));
  return best;
}

/** A term's postings as the index stores them: its sealed blocks, then its open block. */
interface TermPostings {
  df: number;
  metas: BlockMeta[];
  load: (i: number) => Block;
}

/**
 * A term's postings: its sealed blocks and its open block from the index, then its postings in the tail's
 * documents above the term's merge mark (tail.ts), which all come after the index's.
 */
function termPostings(storage: PostingStorage, tenant: string, term: string, tail: Tail, upTo: number): TermPostings | null {
  const head = storage.head(tenant, term);
  const tailBlocks = tail.postings(term, Math.max(upTo, head?.merged ?? 0));
  if (!head && tailBlocks.length === 0) return null;
  const sealedBytes = head && head.sealedLast > 0 ? storage.metas(tenant, term) : null;
  const metas = sealedBytes ? decodeMetas(sealedBytes) : [];
  const sealed = metas.length;
  const open = head && head.open.byteLength > 0 ? decodeBlock(head.open) : null;
  const loaded: Block[] = [];
  if (open && open.count > 0) {
    metas.push(metaOfBlock(open));
    loaded.push(open);
  }
  let df = head?.df ?? 0;
  for (const block of tailBlocks) {
    metas.push(metaOfBlock(block));
    loaded.push(block);
    df += block.count;
  }
  // Read-ahead: blocks read one after another are read in runs, doubling up to MAX_READ_AHEAD, since one
  // range read costs about what a single block's read does; a skipped block starts again at one.
  let run = 1;
  let next = -1;
  let ahead: Uint8Array[] = [];
  let aheadFrom = 0;
  return {
    df,
    metas,
    load: (i) => {
      if (i >= sealed) return loaded[i - sealed]!;
      if (i >= aheadFrom && i < aheadFrom + ahead.length) {
        next = i + 1;
        return decodeBlock(ahead[i - aheadFrom]!);
      }
      run = i === next ? Math.min(2 * run, MAX_READ_AHEAD) : 1;
      const to = Math.min(i + run, sealed) - 1;
      ahead = to === i ? [storage.block(tenant, term, metas[i]!.last)].filter((b) => b !== null) : storage.blockRange(tenant, term, metas[i]!.last, metas[to]!.last);
      aheadFrom = i;
      next = i + 1;
      if (ahead.length !== to - i + 1) throw new Error(`the index is missing a block of "${term}"`);
      return decodeBlock(ahead[0]!);
    },
  };
}

const MAX_READ_AHEAD = 16;

/** Binary search for `doc` in a block's sorted documents; -1 when absent. */
function indexOf(docs: Uint32Array, doc: number): number {
  let lo = 0;
  let hi = docs.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const d = docs[mid]!;
    if (d < doc) lo = mid + 1;
    else if (d > doc) hi = mid - 1;
    else return mid;
  }
  return -1;
}

/**
 * A phrase's postings, block by block on its rarest term's blocks: a document holds the phrase where the
 * terms stand one after another in the same field, and its frequency in a field is the number of places
 * the phrase starts there. A block is checked only when the search reads it, so a phrase costs what the
 * blocks the pruning cannot skip cost. The rarest term's metas bound the phrase's blocks: a document's
 * phrase frequency is at most that term's frequency, and its lengths are its own.
 */
function phrasePostings(parts: TermPostings[]): { metas: BlockMeta[]; load: (i: number) => Columns } {
  const rarest = parts.reduce((best, p, i) => (p.df < parts[best]!.df ? i : best), 0);
  const lead = parts[rarest]!;
  // The other terms' cursors only move forward: the searcher reads the lead's blocks in order.
  const cursors = parts.map((p) => ({ p, index: 0, block: null as Block | null, loaded: -1 }));
  const at = (c: (typeof cursors)[number], doc: number): { block: Block; i: number } | null => {
    while (c.index < c.p.metas.length && c.p.metas[c.index]!.last < doc) c.index++;
    if (c.index >= c.p.metas.length) return null;
    if (c.loaded !== c.index) {
      c.block = c.p.load(c.index);
      c.loaded = c.index;
    }
    const i = indexOf(c.block!.docs, doc);
    return i < 0 ? null : { block: c.block!, i };
  };
  const load = (bi: number): Columns => {
    const block = lead.load(bi);
    const docs = new Uint32Array(block.count);
    const tfT = new Uint16Array(block.count);
    const tfB = new Uint16Array(block.count);
    const lenT = new Uint16Array(block.count);
    const lenB = new Uint16Array(block.count);
    let count = 0;
    for (let i = 0; i < block.count; i++) {
      const doc = block.docs[i]!;
      const hits = cursors.map((c, j) => (j === rarest ? { block, i } : at(c, doc)));
      if (hits.some((h) => h === null)) continue;
      const [t, b] = phraseFrequencies(hits as { block: Block; i: number }[]);
      if (t + b === 0) continue;
      docs[count] = doc;
      tfT[count] = t;
      tfB[count] = b;
      lenT[count] = block.lenT[i]!;
      lenB[count] = block.lenB[i]!;
      count++;
    }
    return { count, docs: docs.subarray(0, count), tfT: tfT.subarray(0, count), tfB: tfB.subarray(0, count), lenT: lenT.subarray(0, count), lenB: lenB.subarray(0, count) };
  };
  return { metas: lead.metas, load };
}

/** How many times the phrase starts in the title and in the body of one document; hits[j] is term j's posting. */
function phraseFrequencies(hits: { block: Block; i: number }[]): [number, number] {
  const field = (title: boolean): number => {
    const lists = hits.map(({ block, i }) => {
      const start = positionStart(block, i);
      const t = block.tfT[i]!;
      return title ? block.positions.subarray(start, start + t) : block.positions.subarray(start + t, start + t + block.tfB[i]!);
    });
    let count = 0;
    for (const p of lists[0]!) {
      if (lists.every((list, j) => j === 0 || contains(list, p + j))) count++;
    }
    return count;
  };
  return [field(true), field(false)];
}

function contains(sorted: Uint16Array, value: number): boolean {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = sorted[mid]!;
    if (v < value) lo = mid + 1;
    else if (v > value) hi = mid - 1;
    else return true;
  }
  return false;
}

/** The cursors of a query's clauses in one tenant; a clause with a term the tenant never used matches nothing and is left out. */
function cursorsOf(storage: PostingStorage, tenant: string, stats: CollectionStats, clauses: readonly Clause[], params: Bm25Params, tail: Tail): ClauseCursor[] {
  const cursors: ClauseCursor[] = [];
  const upTo = storage.mergedUpTo();
  clauses.forEach((clause, order) => {
    const parts = clause.terms.map((term) => termPostings(storage, tenant, term, tail, upTo));
    if (parts.some((p) => p === null)) return;
    const present = parts as TermPostings[];
    // A phrase weighs the sum of its terms' IDFs, as Lucene's PhraseQuery does: no count of the phrase's
    // documents is needed, so a phrase costs what its rarest term costs.
    const weight = clauseWeight(params, stats, present.reduce((sum, p) => sum + idf(stats.docs, p.df), 0));
    if (present.length === 1) {
      cursors.push(new ClauseCursor(order, weight, present[0]!.metas, present[0]!.load));
      return;
    }
    const phrase = phrasePostings(present);
    cursors.push(new ClauseCursor(order, weight, phrase.metas, phrase.load));
  });
  return cursors;
}

/** The k best (score, doc) pairs seen so far, the worst on top; of two equal scores the older document is worse. */
class TopK {
  private readonly heap: ScoredDoc[] = [];
  constructor(private readonly k: number) {}

  get full(): boolean {
    return this.heap.length >= this.k;
  }

  /** The score a document must reach to enter (documents come in increasing order, so a tie enters). */
  get threshold(): number {
    return this.full ? this.heap[0]!.score : 0;
  }

  offer(doc: number, score: number): void {
    const item = { doc, score };
    if (!this.full) {
      this.heap.push(item);
      this.up(this.heap.length - 1);
    } else {
      this.heap[0] = item;
      this.down(0);
    }
  }

  sorted(): ScoredDoc[] {
    return [...this.heap].sort((a, b) => b.score - a.score || b.doc - a.doc);
  }

  private less(a: ScoredDoc, b: ScoredDoc): boolean {
    return a.score < b.score || (a.score === b.score && a.doc < b.doc);
  }
  private up(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }
  private down(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
      if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}

/** Bounds are compared with this much room, so that rounding in a sum never prunes a document that ties. */
const SLACK = 1e-9;
const below = (bound: number, threshold: number) => bound * (1 + SLACK) < threshold;

/**
 * The k documents of the tenant that score best for the query, best first; equal scores newest (highest
 * number) first. Exact: the same documents, scores and order as scoring every match (the tests' oracle).
 *
 * Block-max MaxScore, after Lucene's MaxScoreBulkScorer: the documents are visited in windows that end
 * where the first of the clauses' current blocks ends, so that each clause has one block, and one upper
 * bound, per window. A window whose bounds cannot reach the k-th best score so far is skipped unread.
 * Otherwise the clauses whose bounds together cannot reach it are "non-essential": only documents of the
 * other clauses are candidates, and a non-essential clause is read for a candidate only while the
 * candidate can still make it. The work grows with k and with how rare the query's best words are, not
 * with the number of matches.
 */
export function searchIndex(storage: PostingStorage, tenant: string, query: TextQuery, options: SearchOptions): ScoredDoc[] {
  const tail = options.tail ?? EMPTY_TAIL;
  const stats = addStats(storage.stats(tenant), tail.stats);
  if (stats.docs === 0 || options.k <= 0) return [];
  const params = options.params ?? RANKING;
  const clauses = clausesOf(query);
  let cursors = cursorsOf(storage, tenant, stats, clauses, params, tail);
  const top = new TopK(options.k);
  const contributions = new Float64Array(clauses.length);
  let start = 0;
  while (cursors.length > 0) {
    for (const c of cursors) c.seek(start);
    cursors = cursors.filter((c) => !c.exhausted);
    if (cursors.length === 0) break;
    let end = Infinity;
    for (const c of cursors) end = Math.min(end, c.metas[c.index]!.last);
    // Each clause's bound in the window: its current block's, or 0 if that block starts after the window.
    const inWindow = cursors.filter((c) => c.metas[c.index]!.first <= end);
    const bound = (c: ClauseCursor) => c.bounds[c.index]!;
    const threshold = top.threshold;
    const total = inWindow.reduce((sum, c) => sum + bound(c), 0);
    if (!top.full || !below(total, threshold)) {
      inWindow.sort((a, b) => bound(a) - bound(b));
      let split = 0;
      if (top.full) {
        let prefix = 0;
        while (split < inWindow.length && below(prefix + bound(inWindow[split]!), threshold)) prefix += bound(inWindow[split++]!);
      }
      const nonEssential = inWindow.slice(0, split).reverse();
      const essential = inWindow.slice(split);
      scoreWindow(start, end, essential, nonEssential, bound, top, contributions, options.accept);
    }
    if (end === Infinity) break;
    start = end + 1;
  }
  return top.sorted();
}

/** The index's statistics and the tail's together. */
function addStats(index: CollectionStats | null, tail: CollectionStats): CollectionStats {
  if (!index) return tail;
  return { docs: index.docs + tail.docs, titleWords: index.titleWords + tail.titleWords, bodyWords: index.bodyWords + tail.bodyWords };
}

/** Scores the candidates of one window: every document of an essential clause's block in [start, end]. */
function scoreWindow(
  start: number,
  end: number,
  essential: ClauseCursor[],
  nonEssential: ClauseCursor[],
  bound: (c: ClauseCursor) => number,
  top: TopK,
  contributions: Float64Array,
  accept: ((doc: number) => boolean) | undefined,
): void {
  // The essential clauses' documents in the window, merged in document order.
  const blocks = essential.map((c) => c.block());
  const positions = blocks.map((b) => lowerBound(b.docs, start));
  // What the non-essential clauses can still add, from the i-th on.
  const rest = new Float64Array(nonEssential.length + 1);
  for (let i = nonEssential.length - 1; i >= 0; i--) rest[i] = rest[i + 1]! + bound(nonEssential[i]!);
  for (;;) {
    let doc = Infinity;
    for (let e = 0; e < blocks.length; e++) {
      const p = positions[e]!;
      if (p < blocks[e]!.count) doc = Math.min(doc, blocks[e]!.docs[p]!);
    }
    if (doc > end) return;
    contributions.fill(0);
    let partial = 0;
    for (let e = 0; e < blocks.length; e++) {
      const b = blocks[e]!;
      const p = positions[e]!;
      if (p < b.count && b.docs[p] === doc) {
        const s = essential[e]!.scoreAt(b, p);
        contributions[essential[e]!.order] = s;
        partial += s;
        positions[e] = p + 1;
      }
    }
    let pruned = false;
    for (let i = 0; i < nonEssential.length; i++) {
      if (top.full && below(partial + rest[i]!, top.threshold)) {
        pruned = true;
        break;
      }
      const s = nonEssential[i]!.scoreOf(doc);
      contributions[nonEssential[i]!.order] = s;
      partial += s;
    }
    if (pruned) continue;
    // The score as the oracle sums it: clause by clause, in the query's order.
    let score = 0;
    for (let i = 0; i < contributions.length; i++) score += contributions[i]!;
    if (top.full && score < top.threshold) continue;
    if (accept && !accept(doc)) continue;
    top.offer(doc, score);
  }
}

function lowerBound(docs: Uint32Array, doc: number): number {
  let lo = 0;
  let hi = docs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (docs[mid]! < doc) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
