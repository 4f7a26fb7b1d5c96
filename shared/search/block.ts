import { RANKING } from './scoring.js';

/**
 * Postings and their blocks: how one term's occurrences in one tenant are stored.
 *
 * A term's postings are sorted by document number and cut into blocks of about BLOCK_SIZE. A block is one
 * byte string of fixed-width arrays, so that decoding is a copy and a few typed-array views:
 *   u32 count | u32 docs[count] | u16 tfT[count] | u16 tfB[count] | u16 lenT[count] | u16 lenB[count]
 *   | u16 positions[…]  (each posting's title positions, then its body positions, in posting order)
 * Field lengths and positions fit in 16 bits because a field is indexed up to MAX_FIELD_WORDS words.
 *
 * Beside each block the term keeps its BlockMeta (first and last document, the largest counts, the
 * shortest fields), which bounds the score of any document in the block without reading it.
 */
export const BLOCK_SIZE = 128;

/** Words of a field that are indexed; the rest of a (very long) field is not. */
export const MAX_FIELD_WORDS = 0xffff;

/** One document's occurrences of one term. */
export interface Posting {
  doc: number;
  /** Positions in the title and in the body (their counts are the term frequencies). */
  posT: number[];
  posB: number[];
  /** The document's field lengths, in words. */
  lenT: number;
  lenB: number;
}

/** A decoded block, as the searcher reads it. */
export interface Block {
  count: number;
  docs: Uint32Array;
  tfT: Uint16Array;
  tfB: Uint16Array;
  lenT: Uint16Array;
  lenB: Uint16Array;
  /** All positions; `positionStart(block, i)` finds posting i's. */
  positions: Uint16Array;
  /** Offsets into `positions`, computed on first use. */
  starts?: Uint32Array;
}

/**
 * What bounds a block's scores without reading it: its document range, its extreme counts and lengths,
 * and its impacts.
 *
 * The extremes (the largest counts, the shortest fields, each over the whole block) bound any document's
 * score for any parameters, but loosely: they mix the best of different documents. The impacts are the
 * block's documents that are best for some query, as Lucene keeps (frequency, norm) pairs: with the title
 * weight IMPACT_WEIGHT, a document has a weighted count c = w·tfT + tfB and length d = w·lenT + lenB, a
 * score increases with c and decreases with d whatever the IDF, k1, b and average length, so only the
 * documents that no other beats on both (the Pareto front) can score best, and the best of them bounds
 * the block exactly. They are kept as those documents' (tfT, tfB, lenT, lenB), at most MAX_IMPACTS of them
 * (beyond that, neighbours are merged into one that dominates both, which still bounds). A search with
 * another title weight uses the extremes.
 */
export interface BlockMeta {
  first: number;
  last: number;
  count: number;
  maxTfT: number;
  maxTfB: number;
  minLenT: number;
  minLenB: number;
  /** (tfT, tfB, lenT, lenB) of each impact, four u16 after another. */
  impacts: Uint16Array;
}

/** The title weight the impacts are computed for: the service's (scoring.ts). */
export const IMPACT_WEIGHT = RANKING.titleWeight;

/** The most impacts a block keeps. */
export const MAX_IMPACTS = 8;

export function encodeBlock(postings: readonly Posting[]): Uint8Array {
  const count = postings.length;
  let positionCount = 0;
  for (const p of postings) positionCount += p.posT.length + p.posB.length;
  const bytes = new Uint8Array(4 + 4 * count + 8 * count + 2 * positionCount);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, count, true);
  let at = 4;
  for (const p of postings) {
    view.setUint32(at, p.doc, true);
    at += 4;
  }
  for (const field of [(p: Posting) => p.posT.length, (p: Posting) => p.posB.length, (p: Posting) => p.lenT, (p: Posting) => p.lenB]) {
    for (const p of postings) {
      view.setUint16(at, field(p), true);
      at += 2;
    }
  }
  for (const p of postings) {
    for (const position of p.posT) {
      view.setUint16(at, position, true);
      at += 2;
    }
    for (const position of p.posB) {
      view.setUint16(at, position, true);
      at += 2;
    }
  }
  return bytes;
}

/** The block's arrays. Copies the bytes once, so that the views are aligned whatever buffer they came in. */
export function decodeBlock(bytes: Uint8Array): Block {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  const buffer = copy.buffer;
  const count = new DataView(buffer).getUint32(0, true);
  const u16 = (index: number) => 4 + 4 * count + 2 * count * index;
  const positionsAt = u16(4);
  return {
    count,
    docs: new Uint32Array(buffer, 4, count),
    tfT: new Uint16Array(buffer, u16(0), count),
    tfB: new Uint16Array(buffer, u16(1), count),
    lenT: new Uint16Array(buffer, u16(2), count),
    lenB: new Uint16Array(buffer, u16(3), count),
    positions: new Uint16Array(buffer, positionsAt, (buffer.byteLength - positionsAt) / 2),
  };
}

/** Where posting i's positions start in `block.positions` (title positions first, then body). */
export function positionStart(block: Block, i: number): number {
  if (!block.starts) {
    const starts = new Uint32Array(block.count + 1);
    for (let j = 0; j < block.count; j++) starts[j + 1] = starts[j]! + block.tfT[j]! + block.tfB[j]!;
    block.starts = starts;
  }
  return block.starts[i]!;
}

/** The block's postings as objects, for the writer. */
export function blockPostings(block: Block): Posting[] {
  const out: Posting[] = [];
  for (let i = 0; i < block.count; i++) {
    const start = positionStart(block, i);
    const tfT = block.tfT[i]!;
    const tfB = block.tfB[i]!;
    out.push({
      doc: block.docs[i]!,
      posT: Array.from(block.positions.subarray(start, start + tfT)),
      posB: Array.from(block.positions.subarray(start + tfT, start + tfT + tfB)),
      lenT: block.lenT[i]!,
      lenB: block.lenB[i]!,
    });
  }
  return out;
}

export function metaOf(postings: readonly Posting[]): BlockMeta {
  return metaOfColumns({
    count: postings.length,
    docs: Uint32Array.from(postings, (p) => p.doc),
    tfT: Uint16Array.from(postings, (p) => p.posT.length),
    tfB: Uint16Array.from(postings, (p) => p.posB.length),
    lenT: Uint16Array.from(postings, (p) => p.lenT),
    lenB: Uint16Array.from(postings, (p) => p.lenB),
  });
}

/** The meta of a decoded block (the open block, whose meta is not stored). */
export function metaOfBlock(block: Block): BlockMeta {
  return metaOfColumns(block);
}

function metaOfColumns(b: Pick<Block, 'count' | 'docs' | 'tfT' | 'tfB' | 'lenT' | 'lenB'>): BlockMeta {
  const meta: BlockMeta = {
    first: b.docs[0]!,
    last: b.docs[b.count - 1]!,
    count: b.count,
    maxTfT: 0,
    maxTfB: 0,
    minLenT: MAX_FIELD_WORDS,
    minLenB: MAX_FIELD_WORDS,
    impacts: impactsOf(b),
  };
  for (let i = 0; i < b.count; i++) {
    meta.maxTfT = Math.max(meta.maxTfT, b.tfT[i]!);
    meta.maxTfB = Math.max(meta.maxTfB, b.tfB[i]!);
    meta.minLenT = Math.min(meta.minLenT, b.lenT[i]!);
    meta.minLenB = Math.min(meta.minLenB, b.lenB[i]!);
  }
  return meta;
}

/** The block's Pareto front at IMPACT_WEIGHT (see BlockMeta), merged down to MAX_IMPACTS. */
function impactsOf(b: Pick<Block, 'count' | 'tfT' | 'tfB' | 'lenT' | 'lenB'>): Uint16Array {
  const w = IMPACT_WEIGHT;
  const c = (i: number) => w * b.tfT[i]! + b.tfB[i]!;
  const d = (i: number) => w * b.lenT[i]! + b.lenB[i]!;
  const order = Array.from({ length: b.count }, (_, i) => i).sort((x, y) => c(y) - c(x) || d(x) - d(y));
  // By count, highest first: a document is on the front when it is shorter than every one counted higher.
  const front: number[] = [];
  let shortest = Infinity;
  for (const i of order) {
    if (d(i) < shortest) {
      front.push(i);
      shortest = d(i);
    }
  }
  const groups = Math.min(front.length, MAX_IMPACTS);
  const impacts = new Uint16Array(4 * groups);
  for (let g = 0; g < groups; g++) {
    // Neighbours on the front, merged into one that dominates them: the largest counts, the shortest fields.
    const members = front.slice(Math.floor((g * front.length) / groups), Math.floor(((g + 1) * front.length) / groups));
    impacts[4 * g] = Math.max(...members.map((i) => b.tfT[i]!));
    impacts[4 * g + 1] = Math.max(...members.map((i) => b.tfB[i]!));
    impacts[4 * g + 2] = Math.min(...members.map((i) => b.lenT[i]!));
    impacts[4 * g + 3] = Math.min(...members.map((i) => b.lenB[i]!));
  }
  return impacts;
}

/**
 * The metas of a term's sealed blocks, as stored, one after another: u32 first, u32 last, u16 count,
 * maxTfT, maxTfB, minLenT, minLenB, u16 the number of impacts, then each impact's four u16.
 */
export function encodeMetas(metas: readonly BlockMeta[]): Uint8Array {
  let size = 0;
  for (const m of metas) size += META_HEADER + 2 * m.impacts.length;
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  let at = 0;
  for (const m of metas) {
    view.setUint32(at, m.first, true);
    view.setUint32(at + 4, m.last, true);
    const u16 = [m.count, m.maxTfT, m.maxTfB, m.minLenT, m.minLenB, m.impacts.length / 4, ...m.impacts];
    at += 8;
    for (const v of u16) {
      view.setUint16(at, v, true);
      at += 2;
    }
  }
  return bytes;
}

const META_HEADER = 8 + 2 * 6;

export function decodeMetas(bytes: Uint8Array): BlockMeta[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const metas: BlockMeta[] = [];
  let at = 0;
  while (at < bytes.byteLength) {
    const u16 = (i: number) => view.getUint16(at + 8 + 2 * i, true);
    const impacts = new Uint16Array(4 * u16(5));
    for (let i = 0; i < impacts.length; i++) impacts[i] = u16(6 + i);
    metas.push({ first: view.getUint32(at, true), last: view.getUint32(at + 4, true), count: u16(0), maxTfT: u16(1), maxTfB: u16(2), minLenT: u16(3), minLenB: u16(4), impacts });
    at += META_HEADER + 2 * impacts.length;
  }
  return metas;
}

/** The number of postings in an encoded block, without decoding it. */
export function blockCount(bytes: Uint8Array): number {
  return bytes.byteLength === 0 ? 0 : new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true);
}

/** The last document of an encoded, non-empty block, without decoding it. */
export function blockLastDoc(bytes: Uint8Array): number {
  const count = blockCount(bytes);
  return new DataView(bytes.buffer, bytes.byteOffset + 4 + 4 * (count - 1), 4).getUint32(0, true);
}

/**
 * The block with `more` postings at its end (their documents above every other, in order): what a merge
 * does to a term's open block, by copying byte ranges instead of decoding and encoding the block.
 */
export function appendPostings(bytes: Uint8Array, more: readonly Posting[]): Uint8Array {
  if (more.length === 0) return bytes;
  if (bytes.byteLength === 0) return encodeBlock(more);
  const count = blockCount(bytes);
  const total = count + more.length;
  let added = 0;
  for (const p of more) added += p.posT.length + p.posB.length;
  const out = new Uint8Array(bytes.byteLength + 12 * more.length + 2 * added);
  const view = new DataView(out.buffer);
  view.setUint32(0, total, true);
  out.set(bytes.subarray(4, 4 + 4 * count), 4);
  let at = 4 + 4 * count;
  for (const p of more) {
    view.setUint32(at, p.doc, true);
    at += 4;
  }
  const oldU16 = 4 + 4 * count;
  const newU16 = 4 + 4 * total;
  const columns = [(p: Posting) => p.posT.length, (p: Posting) => p.posB.length, (p: Posting) => p.lenT, (p: Posting) => p.lenB];
  columns.forEach((value, column) => {
    const from = oldU16 + 2 * count * column;
    let to = newU16 + 2 * total * column;
    out.set(bytes.subarray(from, from + 2 * count), to);
    to += 2 * count;
    for (const p of more) {
      view.setUint16(to, value(p), true);
      to += 2;
    }
  });
  const oldPositions = oldU16 + 8 * count;
  at = newU16 + 8 * total;
  out.set(bytes.subarray(oldPositions), at);
  at += bytes.byteLength - oldPositions;
  for (const p of more) {
    for (const position of p.posT) {
      view.setUint16(at, position, true);
      at += 2;
    }
    for (const position of p.posB) {
      view.setUint16(at, position, true);
      at += 2;
    }
  }
  return out;
}

/** Postings `from` to `to` (excluded) of an encoded block, encoded as a block of their own (no bytes when none). */
export function sliceBlock(bytes: Uint8Array, from: number, to: number): Uint8Array {
  const count = to - from;
  if (count === 0) return new Uint8Array(0);
  const block = decodeBlock(bytes);
  const start = positionStart(block, from);
  const end = positionStart(block, to);
  const out = new Uint8Array(4 + 12 * count + 2 * (end - start));
  const view = new DataView(out.buffer);
  view.setUint32(0, count, true);
  new Uint32Array(out.buffer, 4, count).set(block.docs.subarray(from, to));
  const u16 = new Uint16Array(out.buffer, 4 + 4 * count);
  [block.tfT, block.tfB, block.lenT, block.lenB].forEach((column, i) => u16.set(column.subarray(from, to), i * count));
  u16.set(block.positions.subarray(start, end), 4 * count);
  return out;
}

