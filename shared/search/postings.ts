import { decodeBlock, positionStart, type Block, type ScoreColumns } from './block.js';
import { MetaTable, metaOfBlock } from './metas.js';
import { decodeScores, decodeSealed, fullColumns, scoreColumns, type FullColumns, type SealedBlock, type SealedDocs } from './sealed.js';
import type { TermBlocks } from './block-cache.js';
import { surelyBelow, type ClauseWeight } from './scoring.js';
import type { PostingStorage } from './storage.js';
import type { Tail } from './tail.js';

/**
 * A clause's postings as a search reads them: block metas to bound scores without reading, and blocks
 * loaded on demand. A term's come from the index (its sealed blocks, read ahead in runs, and its open block)
 * and from the tail; a phrase's are checked block by block on its rarest term's.
 */

/** A term's postings as the index and the tail hold them: its sealed blocks, its open block, its tail blocks. */
export interface TermPostings {
  df: number;
  metas: MetaTable;
  /** Block `i`'s scoring columns: a sealed block decoded into `into`, the others as they are kept. */
  load(i: number, into: ScoreColumns): ScoreColumns;
  /**
   * Block `i`'s documents only, into `into`, when it is a sealed block (its counts and lengths then read one
   * posting at a time); null for the others, which are kept decoded (load them).
   */
  loadDocs(i: number, into: SealedDocs): SealedDocs | null;
  /** Block `i` whole, positions included (what a phrase reads): a sealed block decoded into `into`. */
  loadFull(i: number, into: FullColumns): Block;
  /**
   * Blocks `indices` whole (increasing), the sealed ones read at once: each one a function that gives it,
   * a sealed block decoded into `into` when called.
   */
  loadFullMany(indices: readonly number[]): ((into: FullColumns) => Block)[];
}

/**
 * A term's postings: its sealed blocks and its open block from the index, then its postings in the tail's
 * documents above the term's merge mark (tail.ts), which all come after the index's. The blocks whose metas
 * are not stored (the open block, the tail's) have their impacts kept for `titleWeight`, the search's.
 */
export function termPostings(storage: PostingStorage, tenant: string, term: string, tail: Tail, upTo: number, titleWeight: number): TermPostings | null {
  const head = storage.head(tenant, term);
  const tailBlocks = tail.postings(term, Math.max(upTo, head?.merged ?? 0));
  if (!head && tailBlocks.length === 0) return null;
  const open = head && head.open.byteLength > 0 ? decodeBlock(head.open) : null;
  const loaded: Block[] = open && open.count > 0 ? [open, ...tailBlocks] : tailBlocks;
  const metas = MetaTable.of(head && head.sealedLast > 0 ? storage.metas(tenant, term) : null, loaded.map((block) => metaOfBlock(block, titleWeight)));
  const sealed = metas.stored;
  let df = head?.df ?? 0;
  for (const block of tailBlocks) df += block.count;
  const missing = () => new Error(`the index is missing a block of "${term}"`);
  const readScores = () => readAhead(sealed, missing, (i) => storage.block(tenant, term, metas.last[i]!), (i, to) => storage.blockRange(tenant, term, metas.last[i]!, metas.last[to]!));
  // The term's kept scores and positions, each asked for once a search (each ask counts for what the cache keeps).
  const keptScores = once(() => storage.cachedBlocks(tenant, term, 'scores'));
  const keptPositions = once(() => storage.cachedBlocks(tenant, term, 'positions'));
  const scores = keeping(keptScores, metas.last, readScores);
  // A phrase reads the scores and positions of the same blocks: each has its own run.
  const fullScores = keeping(keptScores, metas.last, readScores);
  const positions = keeping(keptPositions, metas.last, () =>
    readAhead(sealed, missing, (i) => storage.positions(tenant, term, metas.last[i]!), (i, to) => storage.positionRange(tenant, term, metas.last[i]!, metas.last[to]!)),
  );
  // Blocks far apart (proximity's, at the best documents): those kept are taken from the cache, the rest
  // read in one statement and kept.
  const loadFullMany = (indices: readonly number[]): ((into: FullColumns) => Block)[] => {
    const kept = new Map<number, SealedBlock>();
    const toRead: number[] = [];
    for (const i of indices) {
      if (i >= sealed) continue;
      const last = metas.last[i]!;
      const scoresKept = keptScores()?.get(last);
      const positionsKept = keptPositions()?.get(last);
      if (scoresKept && positionsKept) kept.set(i, { scores: scoresKept, positions: positionsKept });
      else toRead.push(i);
    }
    const read = storage.blocksAt(tenant, term, toRead.map((i) => metas.last[i]!));
    if (read.length !== toRead.length) throw missing();
    toRead.forEach((i, k) => {
      const last = metas.last[i]!;
      const block = read[k]!;
      kept.set(i, { scores: keptScores()?.put(last, block.scores) ?? block.scores, positions: keptPositions()?.put(last, block.positions) ?? block.positions });
    });
    return indices.map((i) => {
      if (i >= sealed) return () => loaded[i - sealed]!;
      const block = kept.get(i)!;
      return (into) => decodeSealed(block, into);
    });
  };
  return {
    df,
    metas,
    load: (i, into) => (i >= sealed ? loaded[i - sealed]! : decodeScores(scores(i), into)),
    loadDocs: (i, into) => (i >= sealed ? null : into.decode(scores(i))),
    loadFull: (i, into) => (i >= sealed ? loaded[i - sealed]! : decodeSealed({ scores: fullScores(i), positions: positions(i) }, into)),
    loadFullMany,
  };
}

/** `make()` on the first call, its result after. */
function once<T>(make: () => T): () => T {
  let made = false;
  let value: T;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value;
  };
}

/**
 * Reads sealed blocks by index through the storage's cache of them (block-cache.ts), when it keeps one: a
 * block kept is not read, and a block read is kept. Both the cache and the reader are made on the first
 * block asked for, so that a term whose blocks a search never reads (most of them, for a phrase's
 * positions) costs neither.
 */
function keeping(cache: () => TermBlocks | null, lasts: Uint32Array, reader: () => (i: number) => Uint8Array): (i: number) => Uint8Array {
  let read: ((i: number) => Uint8Array) | undefined;
  let blocks: TermBlocks | null | undefined;
  return (i) => {
    if (blocks === undefined) blocks = cache();
    if (blocks === null) return (read ??= reader())(i);
    const last = lasts[i]!;
    return blocks.get(last) ?? blocks.put(last, (read ??= reader())(i));
  };
}

/**
 * Reads blocks 0…count-1 by index, in runs: blocks read one after another are read together, the run
 * doubling up to MAX_READ_AHEAD, since one range read costs about what a single block's read does; a block
 * that is not the next one starts a run of one again.
 */
function readAhead(
  count: number,
  missing: () => Error,
  one: (i: number) => Uint8Array | null,
  range: (i: number, to: number) => Uint8Array[],
): (i: number) => Uint8Array {
  let run = 1;
  let next = -1;
  let ahead: Uint8Array[] = [];
  let from = 0;
  return (i) => {
    if (i >= from && i < from + ahead.length) {
      next = i + 1;
      return ahead[i - from]!;
    }
    run = i === next ? Math.min(2 * run, MAX_READ_AHEAD) : 1;
    const to = Math.min(i + run, count) - 1;
    if (to === i) {
      const bytes = one(i);
      if (!bytes) throw missing();
      ahead = [bytes];
    } else ahead = range(i, to);
    if (ahead.length !== to - i + 1) throw missing();
    from = i;
    next = i + 1;
    return ahead[0]!;
  };
}

const MAX_READ_AHEAD = 16;

/** The position of the first of the `count` sorted documents at or after `doc` (`count` when none is). */
export function lowerBound(docs: Uint32Array, count: number, doc: number): number {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (docs[mid]! < doc) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Binary search for `doc` in the first `count` of a block's sorted documents; -1 when absent. It stops as
 * soon as it meets `doc`: written as `lowerBound` and a comparison, searches of several words measured a
 * few percent slower when cursor.ts `scoreOf` looked up every candidate this way (it now walks forward, as
 * a phrase does; proximity's readers still look up by this).
 */
export function indexOf(docs: Uint32Array, count: number, doc: number): number {
  let lo = 0;
  let hi = count - 1;
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
 *
 * `parts` are the phrase's terms in order; a term the phrase repeats is the same TermPostings each time,
 * and its blocks are read once. In a document, the places the phrase may start are those of the word with
 * the fewest positions there, and each other word keeps those it stands after at its offset: a merge of two
 * sorted lists, or a binary search of each place when they are few. So matching costs about the sum of the
 * words' positions in the document, not their product (cost.ts bounds it so).
 */
export function phrasePostings(parts: TermPostings[], weight: ClauseWeight): { metas: MetaTable; load: (i: number, into: ScoreColumns, floor: number) => ScoreColumns; lookup: PhraseLookup } {
  const n = parts.length;
  // The distinct terms, and each part's.
  const terms: TermPostings[] = [];
  const termOf = new Int32Array(n);
  parts.forEach((p, j) => {
    let t = terms.indexOf(p);
    if (t < 0) t = terms.push(p) - 1;
    termOf[j] = t;
  });
  const m = terms.length;
  let rarest = 0;
  for (let t = 1; t < m; t++) if (terms[t]!.df < terms[rarest]!.df) rarest = t;
  const lead = terms[rarest]!;
  // Each term's block at hand and the posting of the document being checked. The other terms move forward,
  // as the searcher reads the lead's blocks in order, but for a block read again.
  // A term's block is decoded without its positions first (`blocks`, into `scoreScratch`), and with them
  // (into `scratch`) only once a document of it is matched: most documents are left out by the floor first.
  const index = new Int32Array(m);
  const loadedAt = new Int32Array(m).fill(-1);
  const blocks = new Array<ScoreColumns | null>(m).fill(null);
  const positioned = new Array<Block | null>(m).fill(null);
  const scoreScratch = terms.map(() => scoreColumns());
  const scratch = terms.map(() => fullColumns());
  const found = new Int32Array(m);
  // Where each term's lookup starts in its block: the documents asked come in increasing order, so a term
  // is walked forward from its last one, at most once over a block, where a binary search per document
  // cost several steps (a phrase of common words asks nearly every document of the rarest one's blocks).
  const at = new Int32Array(m);
  // Each part's positions in the field being matched: where they start in its block, and how many.
  const from = new Int32Array(n);
  const length = new Int32Array(n);
  let places = new Int32Array(64);

  /** Moves term t to the block that may hold `doc`; the posting's index there, or -1 when the term lacks it. */
  const locate = (t: number, doc: number): number => {
    const { metas } = terms[t]!;
    let i = index[t]!;
    // Back first, should the lead's block be read again (the searcher loads one again for a lower floor).
    while (i > 0 && metas.last[i - 1]! >= doc) i--;
    while (i < metas.length && metas.last[i]! < doc) i++;
    index[t] = i;
    if (i >= metas.length || metas.first[i]! > doc) return -1;
    if (loadedAt[t] !== i) {
      blocks[t] = terms[t]!.load(i, scoreScratch[t]!);
      positioned[t] = null;
      loadedAt[t] = i;
      at[t] = 0;
    }
    const { docs, count } = blocks[t]!;
    // From the start again should a document come before the last one (none does; it stays right).
    let p = at[t]! > 0 && docs[at[t]! - 1]! >= doc ? 0 : at[t]!;
    while (p < count && docs[p]! < doc) p++;
    at[t] = p;
    return p < count && docs[p] === doc ? p : -1;
  };

  /** How many times the phrase starts in one field of the document whose postings `found` holds. */
  const starts = (title: boolean): number => {
    let base = 0;
    for (let j = 0; j < n; j++) {
      const t = termOf[j]!;
      const b = (positioned[t] ??= terms[t]!.loadFull(loadedAt[t]!, scratch[t]!));
      const i = found[t]!;
      from[j] = positionStart(b, i) + (title ? 0 : b.tfT[i]!);
      length[j] = title ? b.tfT[i]! : b.tfB[i]!;
      if (length[j] === 0) return 0;
      if (length[j]! < length[base]!) base = j;
    }
    // The places the phrase may start: the base word's positions, less its offset in the phrase.
    if (places.length < length[base]!) places = new Int32Array(length[base]!);
    const basePositions = positioned[termOf[base]!]!.positions;
    let count = 0;
    for (let k = 0; k < length[base]!; k++) {
      const start = basePositions[from[base]! + k]! - base;
      if (start >= 0) places[count++] = start;
    }
    for (let j = 0; j < n && count > 0; j++) {
      if (j === base) continue;
      count = keepFollowed(places, count, positioned[termOf[j]!]!.positions, from[j]!, length[j]!, j);
    }
    return count;
  };

  const load = (bi: number, out: ScoreColumns, floor: number): ScoreColumns => {
    const block = lead.load(bi, scoreScratch[rarest]!);
    blocks[rarest] = block;
    positioned[rarest] = null;
    // The lead's block is this one, as locate keeps it for a lookup.
    loadedAt[rarest] = index[rarest] = bi;
    at[rarest] = 0;
    if (out.docs.length < block.count) Object.assign(out, scoreColumns(block.count));
    let count = 0;
    candidates: for (let i = 0; i < block.count; i++) {
      const doc = block.docs[i]!;
      let tfT = Infinity;
      let tfB = Infinity;
      for (let t = 0; t < m; t++) {
        const at = t === rarest ? i : locate(t, doc);
        if (at < 0) continue candidates;
        found[t] = at;
        tfT = Math.min(tfT, blocks[t]!.tfT[at]!);
        tfB = Math.min(tfB, blocks[t]!.tfB[at]!);
      }
      // The phrase is in a field at most as often as its least frequent word: a document that could not
      // score `floor` with those counts is not matched (the searcher would drop it).
      if (surelyBelow(weight, tfT, tfB, block.lenT[i]!, block.lenB[i]!, floor)) continue;
      const t = starts(true);
      const b = starts(false);
      if (t + b === 0) continue;
      out.docs[count] = doc;
      out.tfT[count] = t;
      out.tfB[count] = b;
      out.lenT[count] = block.lenT[i]!;
      out.lenB[count] = block.lenB[i]!;
      count++;
    }
    out.count = count;
    return out;
  };
  const found1 = { tfT: 0, tfB: 0, lenT: 0, lenB: 0 };
  const lookup: PhraseLookup = {
    found: found1,
    match: (doc) => {
      for (let t = 0; t < m; t++) {
        const at = locate(t, doc);
        if (at < 0) return false;
        found[t] = at;
      }
      const t = starts(true);
      const b = starts(false);
      if (t + b === 0) return false;
      const i = found[rarest]!;
      found1.tfT = t;
      found1.tfB = b;
      found1.lenT = blocks[rarest]!.lenT[i]!;
      found1.lenB = blocks[rarest]!.lenB[i]!;
      return true;
    },
  };
  return { metas: lead.metas, load, lookup };
}

/**
 * A phrase looked up at one document (what a clause that is not essential is asked), rather than matched
 * at every document of the block that holds it: `match(doc)` says whether the document holds the phrase,
 * at or after every document asked before, and leaves its counts and lengths in `found`.
 */
export interface PhraseLookup {
  match(doc: number): boolean;
  readonly found: { tfT: number; tfB: number; lenT: number; lenB: number };
}

/**
 * Keeps, of the first `count` sorted places, those p where p + offset is among the `length` sorted
 * positions from `from`; returns how many are kept (at the front of `places`). A merge walk when the places
 * are many, a binary search of each when they are few against many positions.
 */
function keepFollowed(places: Int32Array, count: number, positions: Uint16Array, from: number, length: number, offset: number): number {
  let kept = 0;
  if (count * 16 < length) {
    for (let k = 0; k < count; k++) if (contains(positions, from, length, places[k]! + offset)) places[kept++] = places[k]!;
    return kept;
  }
  let q = from;
  const end = from + length;
  for (let k = 0; k < count && q < end; k++) {
    const want = places[k]! + offset;
    while (q < end && positions[q]! < want) q++;
    if (q < end && positions[q] === want) places[kept++] = places[k]!;
  }
  return kept;
}

/** Whether `value` is among the `length` sorted positions from `from`. */
export function contains(sorted: Uint16Array, from: number, length: number, value: number): boolean {
  let lo = from;
  let hi = from + length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = sorted[mid]!;
    if (v < value) lo = mid + 1;
    else if (v > value) hi = mid - 1;
    else return true;
  }
  return false;
}
