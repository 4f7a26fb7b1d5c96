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

/** What bounds a block's scores: its document range and its extreme counts and lengths. */
export interface BlockMeta {
  first: number;
  last: number;
  count: number;
  maxTfT: number;
  maxTfB: number;
  minLenT: number;
  minLenB: number;
}

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
  const meta: BlockMeta = { first: postings[0]!.doc, last: postings[postings.length - 1]!.doc, count: postings.length, maxTfT: 0, maxTfB: 0, minLenT: MAX_FIELD_WORDS, minLenB: MAX_FIELD_WORDS };
  for (const p of postings) {
    meta.maxTfT = Math.max(meta.maxTfT, p.posT.length);
    meta.maxTfB = Math.max(meta.maxTfB, p.posB.length);
    meta.minLenT = Math.min(meta.minLenT, p.lenT);
    meta.minLenB = Math.min(meta.minLenB, p.lenB);
  }
  return meta;
}

/** The metas of a decoded block (the open block, whose meta is not stored). */
export function metaOfBlock(block: Block): BlockMeta {
  const meta: BlockMeta = { first: block.docs[0]!, last: block.docs[block.count - 1]!, count: block.count, maxTfT: 0, maxTfB: 0, minLenT: MAX_FIELD_WORDS, minLenB: MAX_FIELD_WORDS };
  for (let i = 0; i < block.count; i++) {
    meta.maxTfT = Math.max(meta.maxTfT, block.tfT[i]!);
    meta.maxTfB = Math.max(meta.maxTfB, block.tfB[i]!);
    meta.minLenT = Math.min(meta.minLenT, block.lenT[i]!);
    meta.minLenB = Math.min(meta.minLenB, block.lenB[i]!);
  }
  return meta;
}

const META_FIELDS = 7;

/** The metas of a term's sealed blocks, as stored: seven u32 per block. */
export function encodeMetas(metas: readonly BlockMeta[]): Uint8Array {
  const words = new Uint32Array(metas.length * META_FIELDS);
  metas.forEach((m, i) => words.set([m.first, m.last, m.count, m.maxTfT, m.maxTfB, m.minLenT, m.minLenB], i * META_FIELDS));
  return new Uint8Array(words.buffer);
}

export function decodeMetas(bytes: Uint8Array): BlockMeta[] {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  const words = new Uint32Array(copy.buffer);
  const metas: BlockMeta[] = [];
  for (let at = 0; at < words.length; at += META_FIELDS) {
    metas.push({ first: words[at]!, last: words[at + 1]!, count: words[at + 2]!, maxTfT: words[at + 3]!, maxTfB: words[at + 4]!, minLenT: words[at + 5]!, minLenB: words[at + 6]! });
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
 * The block with one more posting at its end (its document above every other): the usual write, done by
 * copying byte ranges instead of decoding and encoding the block.
 */
export function appendPosting(bytes: Uint8Array, p: Posting): Uint8Array {
  if (bytes.byteLength === 0) return encodeBlock([p]);
  const count = blockCount(bytes);
  const added = p.posT.length + p.posB.length;
  const out = new Uint8Array(bytes.byteLength + 12 + 2 * added);
  const view = new DataView(out.buffer);
  view.setUint32(0, count + 1, true);
  // docs
  out.set(bytes.subarray(4, 4 + 4 * count), 4);
  view.setUint32(4 + 4 * count, p.doc, true);
  // the four u16 columns
  const oldU16 = 4 + 4 * count;
  const newU16 = 4 + 4 * (count + 1);
  const values = [p.posT.length, p.posB.length, p.lenT, p.lenB];
  for (let column = 0; column < 4; column++) {
    const from = oldU16 + 2 * count * column;
    const to = newU16 + 2 * (count + 1) * column;
    out.set(bytes.subarray(from, from + 2 * count), to);
    view.setUint16(to + 2 * count, values[column]!, true);
  }
  // positions
  const oldPositions = oldU16 + 8 * count;
  const newPositions = newU16 + 8 * (count + 1);
  out.set(bytes.subarray(oldPositions), newPositions);
  let at = newPositions + (bytes.byteLength - oldPositions);
  for (const position of [...p.posT, ...p.posB]) {
    view.setUint16(at, position, true);
    at += 2;
  }
  return out;
}
