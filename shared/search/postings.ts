import { decodeBlock, positionStart, type Block, type ScoreColumns } from './block.js';
import { MetaTable, metaOfBlock } from './metas.js';
import { decodeScores, decodeSealed, fullColumns, scoreColumns, type FullColumns } from './sealed.js';
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
  /** Block `i` whole, positions included (what a phrase reads): a sealed block decoded into `into`. */
  loadFull(i: number, into: FullColumns): Block;
}

/**
 * A term's postings: its sealed blocks and its open block from the index, then its postings in the tail's
 * documents above the term's merge mark (tail.ts), which all come after the index's.
 */
export function termPostings(storage: PostingStorage, tenant: string, term: string, tail: Tail, upTo: number): TermPostings | null {
  const head = storage.head(tenant, term);
  const tailBlocks = tail.postings(term, Math.max(upTo, head?.merged ?? 0));
  if (!head && tailBlocks.length === 0) return null;
  const open = head && head.open.byteLength > 0 ? decodeBlock(head.open) : null;
  const loaded: Block[] = open && open.count > 0 ? [open, ...tailBlocks] : tailBlocks;
  const metas = MetaTable.of(head && head.sealedLast > 0 ? storage.metas(tenant, term) : null, loaded.map((block) => metaOfBlock(block)));
  const sealed = metas.stored;
  let df = head?.df ?? 0;
  for (const block of tailBlocks) df += block.count;
  const missing = () => new Error(`the index is missing a block of "${term}"`);
  const scores = readAhead(sealed, missing, (i) => storage.block(tenant, term, metas.last[i]!), (i, to) => storage.blockRange(tenant, term, metas.last[i]!, metas.last[to]!));
  // A phrase reads the scores and positions of the same blocks: each has its own run.
  const fullScores = readAhead(sealed, missing, (i) => storage.block(tenant, term, metas.last[i]!), (i, to) => storage.blockRange(tenant, term, metas.last[i]!, metas.last[to]!));
  const positions = readAhead(sealed, missing, (i) => storage.positions(tenant, term, metas.last[i]!), (i, to) => storage.positionRange(tenant, term, metas.last[i]!, metas.last[to]!));
  return {
    df,
    metas,
    load: (i, into) => (i >= sealed ? loaded[i - sealed]! : decodeScores(scores(i), into)),
    loadFull: (i, into) => (i >= sealed ? loaded[i - sealed]! : decodeSealed({ scores: fullScores(i), positions: positions(i) }, into)),
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
 * few percent slower (cursor.ts `scoreOf` looks up every candidate this way).
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
 */
export function phrasePostings(parts: TermPostings[]): { metas: MetaTable; load: (i: number, into: ScoreColumns) => ScoreColumns } {
  const n = parts.length;
  let rarest = 0;
  for (let j = 1; j < n; j++) if (parts[j]!.df < parts[rarest]!.df) rarest = j;
  const lead = parts[rarest]!;
  // Each part's block at hand and the posting of the document being checked. The other parts only move
  // forward: the searcher reads the lead's blocks in order.
  const index = new Int32Array(n);
  const loadedAt = new Int32Array(n).fill(-1);
  const blocks = new Array<Block | null>(n).fill(null);
  const scratch = parts.map(() => fullColumns());
  const found = new Int32Array(n);

  /** Moves part j to the block that may hold `doc`; the posting's index there, or -1 when the part lacks it. */
  const locate = (j: number, doc: number): number => {
    const { metas } = parts[j]!;
    let i = index[j]!;
    while (i < metas.length && metas.last[i]! < doc) i++;
    index[j] = i;
    if (i >= metas.length || metas.first[i]! > doc) return -1;
    if (loadedAt[j] !== i) {
      blocks[j] = parts[j]!.loadFull(i, scratch[j]!);
      loadedAt[j] = i;
    }
    return indexOf(blocks[j]!.docs, blocks[j]!.count, doc);
  };

  /** How many times the phrase starts in one field of the document whose postings `found` holds. */
  const starts = (title: boolean): number => {
    const b0 = blocks[0]!;
    const i0 = found[0]!;
    const from = positionStart(b0, i0) + (title ? 0 : b0.tfT[i0]!);
    const length = title ? b0.tfT[i0]! : b0.tfB[i0]!;
    let count = 0;
    next: for (let k = 0; k < length; k++) {
      const p = b0.positions[from + k]!;
      for (let j = 1; j < n; j++) {
        const b = blocks[j]!;
        const i = found[j]!;
        const at = positionStart(b, i) + (title ? 0 : b.tfT[i]!);
        if (!contains(b.positions, at, title ? b.tfT[i]! : b.tfB[i]!, p + j)) continue next;
      }
      count++;
    }
    return count;
  };

  const load = (bi: number, out: ScoreColumns): ScoreColumns => {
    const block = lead.loadFull(bi, scratch[rarest]!);
    blocks[rarest] = block;
    loadedAt[rarest] = -1;
    if (out.docs.length < block.count) Object.assign(out, scoreColumns(block.count));
    let count = 0;
    candidates: for (let i = 0; i < block.count; i++) {
      const doc = block.docs[i]!;
      for (let j = 0; j < n; j++) {
        const at = j === rarest ? i : locate(j, doc);
        if (at < 0) continue candidates;
        found[j] = at;
      }
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
  return { metas: lead.metas, load };
}

/** Whether `value` is among the `length` sorted positions from `from`. */
function contains(sorted: Uint16Array, from: number, length: number, value: number): boolean {
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
