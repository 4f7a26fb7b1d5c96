/**
 * Postings and their blocks: how one term's occurrences in one tenant are stored.
 *
 * A term's postings are sorted by document number and cut into blocks of about BLOCK_SIZE. A block is one
 * byte string of fixed-width arrays, so that decoding is a copy and a few typed-array views:
 *   u32 count | u32 docs[count] | u16 tfT[count] | u16 tfB[count] | u16 lenT[count] | u16 lenB[count]
 *   | u16 positions[…]  (each posting's title positions, then its body positions, in posting order)
 * Field lengths and positions fit in 16 bits because a field is indexed up to MAX_FIELD_WORDS words.
 *
 * This is the form of a term's open block (kept in its head) and of the tail's blocks. A sealed block is
 * stored in a compact form of its own (sealed.ts), and beside it its BlockMeta (metas.ts).
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

/** A block's scoring columns, as the searcher reads them: arrays that may be longer than `count`. */
export interface ScoreColumns {
  count: number;
  docs: Uint32Array;
  tfT: Uint16Array;
  tfB: Uint16Array;
  lenT: Uint16Array;
  lenB: Uint16Array;
}

/** A decoded block, with its positions (what a phrase reads). */
export interface Block extends ScoreColumns {
  /** All positions; `positionStart(block, i)` finds posting i's. */
  positions: Uint16Array;
  /** Offsets into `positions`, computed on first use. */
  starts?: Uint32Array;
}

/** The four 16-bit columns of a block, in the order it stores them: title and body counts, then lengths. */
const U16_COLUMNS = [(p: Posting) => p.posT.length, (p: Posting) => p.posB.length, (p: Posting) => p.lenT, (p: Posting) => p.lenB] as const;

/** Writes each posting's title then body positions from `at`. */
function writePositions(view: DataView, at: number, postings: readonly Posting[]): void {
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
  for (const field of U16_COLUMNS) {
    for (const p of postings) {
      view.setUint16(at, field(p), true);
      at += 2;
    }
  }
  writePositions(view, at, postings);
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

/** The number of postings in an encoded block, without decoding it. */
export function blockCount(bytes: Uint8Array): number {
  return bytes.byteLength === 0 ? 0 : new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true);
}

/** The number of positions in an encoded block, without decoding it. */
export function blockPositionCount(bytes: Uint8Array): number {
  return bytes.byteLength === 0 ? 0 : (bytes.byteLength - 4 - 12 * blockCount(bytes)) / 2;
}

/** The most positions one posting of an encoded block holds (its title and body counts), without decoding it. */
export function blockMostPositions(bytes: Uint8Array): number {
  if (bytes.byteLength === 0) return 0;
  const count = blockCount(bytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tfT = 4 + 4 * count;
  const tfB = tfT + 2 * count;
  let most = 0;
  for (let i = 0; i < count; i++) most = Math.max(most, view.getUint16(tfT + 2 * i, true) + view.getUint16(tfB + 2 * i, true));
  return most;
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
  U16_COLUMNS.forEach((value, column) => {
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
  writePositions(view, at, more);
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

