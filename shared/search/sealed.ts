import { positionStart, type Block, type Posting, type ScoreColumns } from './block.js';

/**
 * A sealed block as it is stored: two byte strings, so that a search that needs no positions (every search
 * but a phrase's) reads only the first, which is small.
 *
 * scores:  u8 widths | u16 count | u32 first document
 *          | the other documents as gaps from the one before | tfT[count] | tfB[count] | lenT[count] | lenB[count]
 *   each column as 1, 2 or 4 bytes (little-endian) a value, as its largest value needs: `widths` holds the
 *   gaps' width code in bits 0-1 and those of the counts (tfT and tfB), lenT and lenB in bits 2-3, 4-5, 6-7
 *   (0: 1 byte, 1: 2 bytes, 2: 4 bytes). A common word's block of 128 takes about 6 bytes a posting.
 * positions: u16 each, every posting's title positions then its body positions, in posting order.
 */
export interface SealedBlock {
  scores: Uint8Array;
  positions: Uint8Array;
}


const widthCode = (max: number) => (max < 0x100 ? 0 : max < 0x10000 ? 1 : 2);
const WIDTH = [1, 2, 4] as const;

/** Encodes the postings (at least one, in document order) as a sealed block. */
export function encodeSealed(postings: readonly Posting[]): SealedBlock {
  const positions: number[] = [];
  for (const p of postings) positions.push(...p.posT, ...p.posB);
  return encodeColumns(
    postings.length,
    (i) => postings[i]!.doc,
    (i) => postings[i]!.posT.length,
    (i) => postings[i]!.posB.length,
    (i) => postings[i]!.lenT,
    (i) => postings[i]!.lenB,
    Uint16Array.from(positions),
  );
}

/** Encodes postings `from` to `to` (excluded) of a decoded block as a sealed block, without a posting object. */
export function encodeSealedSlice(b: Block, from: number, to: number): SealedBlock {
  return encodeColumns(
    to - from,
    (i) => b.docs[from + i]!,
    (i) => b.tfT[from + i]!,
    (i) => b.tfB[from + i]!,
    (i) => b.lenT[from + i]!,
    (i) => b.lenB[from + i]!,
    b.positions.subarray(positionStart(b, from), positionStart(b, to)),
  );
}

function encodeColumns(
  count: number,
  doc: (i: number) => number,
  tfT: (i: number) => number,
  tfB: (i: number) => number,
  lenT: (i: number) => number,
  lenB: (i: number) => number,
  positionList: Uint16Array,
): SealedBlock {
  let maxGap = 0;
  let maxTf = 0;
  let maxLenT = 0;
  let maxLenB = 0;
  for (let i = 0; i < count; i++) {
    if (i > 0) maxGap = Math.max(maxGap, doc(i) - doc(i - 1));
    maxTf = Math.max(maxTf, tfT(i), tfB(i));
    maxLenT = Math.max(maxLenT, lenT(i));
    maxLenB = Math.max(maxLenB, lenB(i));
  }
  const codes = [widthCode(maxGap), widthCode(maxTf), widthCode(maxLenT), widthCode(maxLenB)];
  const [gapW, tfW, lenTW, lenBW] = codes.map((c) => WIDTH[c]!) as [number, number, number, number];
  const scores = new Uint8Array(7 + (count - 1) * gapW + count * (2 * tfW + lenTW + lenBW));
  scores[0] = codes[0]! | (codes[1]! << 2) | (codes[2]! << 4) | (codes[3]! << 6);
  let at = write(scores, 1, count, 2);
  at = write(scores, at, doc(0), 4);
  for (let i = 1; i < count; i++) at = write(scores, at, doc(i) - doc(i - 1), gapW);
  for (let i = 0; i < count; i++) at = write(scores, at, tfT(i), tfW);
  for (let i = 0; i < count; i++) at = write(scores, at, tfB(i), tfW);
  for (let i = 0; i < count; i++) at = write(scores, at, lenT(i), lenTW);
  for (let i = 0; i < count; i++) at = write(scores, at, lenB(i), lenBW);
  const positions = new Uint8Array(2 * positionList.length);
  for (let i = 0, p = 0; i < positionList.length; i++, p += 2) {
    positions[p] = positionList[i]! & 0xff;
    positions[p + 1] = positionList[i]! >>> 8;
  }
  return { scores, positions };
}

function write(bytes: Uint8Array, at: number, value: number, width: number): number {
  for (let i = 0; i < width; i++) bytes[at + i] = (value >>> (8 * i)) & 0xff;
  return at + width;
}

/** The number of postings of a sealed block's scores. */
export function sealedCount(scores: Uint8Array): number {
  return scores[1]! | (scores[2]! << 8);
}

/** A reusable place to decode scores into: arrays grown to the largest block seen. */
export function scoreColumns(capacity = 256): ScoreColumns {
  return { count: 0, docs: new Uint32Array(capacity), tfT: new Uint16Array(capacity), tfB: new Uint16Array(capacity), lenT: new Uint16Array(capacity), lenB: new Uint16Array(capacity) };
}

/** Decodes a sealed block's scores into `into` (its arrays grown if need be); returns it. */
export function decodeScores(scores: Uint8Array, into: ScoreColumns = scoreColumns(sealedCount(scores))): ScoreColumns {
  const count = sealedCount(scores);
  if (into.docs.length < count) Object.assign(into, scoreColumns(count));
  const codes = scores[0]!;
  const tfW = WIDTH[(codes >> 2) & 3]!;
  into.count = count;
  let at = decodeDocs(scores, count, into.docs);
  at = readColumn(scores, at, count, tfW, into.tfT);
  at = readColumn(scores, at, count, tfW, into.tfB);
  at = readColumn(scores, at, count, WIDTH[(codes >> 4) & 3]!, into.lenT);
  readColumn(scores, at, count, WIDTH[(codes >> 6) & 3]!, into.lenB);
  return into;
}

/** Decodes the `count` documents of a sealed block's scores into `docs`; returns where its counts start. */
function decodeDocs(scores: Uint8Array, count: number, docs: Uint32Array): number {
  const gapW = WIDTH[scores[0]! & 3]!;
  let doc = (scores[3]! | (scores[4]! << 8) | (scores[5]! << 16) | (scores[6]! << 24)) >>> 0;
  docs[0] = doc;
  let at = 7;
  if (gapW === 1) for (let i = 1; i < count; i++) docs[i] = doc += scores[at++]!;
  else if (gapW === 2) for (let i = 1; i < count; i++, at += 2) docs[i] = doc += scores[at]! | (scores[at + 1]! << 8);
  else for (let i = 1; i < count; i++, at += 4) docs[i] = doc += (scores[at]! | (scores[at + 1]! << 8) | (scores[at + 2]! << 16) | (scores[at + 3]! << 24)) >>> 0;
  return at;
}

/**
 * A sealed block's documents, decoded, and its counts and lengths left in its bytes, read one posting at a
 * time: what looking a few documents up in a block needs (a clause that is not essential is asked about
 * some of its blocks' documents), at about a fifth of decoding the block whole.
 */
export class SealedDocs {
  count = 0;
  docs = new Uint32Array(256);
  private bytes: Uint8Array = new Uint8Array(0);
  private tfAt = 0;
  private tfBAt = 0;
  private tfWide = false;
  private lenTAt = 0;
  private lenTWide = false;
  private lenBAt = 0;
  private lenBWide = false;

  /** Reads the documents of a sealed block's scores; returns this. */
  decode(scores: Uint8Array): this {
    const count = sealedCount(scores);
    if (this.docs.length < count) this.docs = new Uint32Array(count);
    this.count = count;
    const codes = scores[0]!;
    const tfW = WIDTH[(codes >> 2) & 3]!;
    this.bytes = scores;
    this.tfAt = decodeDocs(scores, count, this.docs);
    this.tfWide = tfW > 1;
    this.tfBAt = this.tfAt + count * tfW;
    this.lenTAt = this.tfBAt + count * tfW;
    this.lenTWide = ((codes >> 4) & 3) > 0;
    this.lenBAt = this.lenTAt + count * (this.lenTWide ? 2 : 1);
    this.lenBWide = ((codes >> 6) & 3) > 0;
    return this;
  }

  tfT(i: number): number {
    return read16(this.bytes, this.tfAt, this.tfWide, i);
  }
  tfB(i: number): number {
    return read16(this.bytes, this.tfBAt, this.tfWide, i);
  }
  lenT(i: number): number {
    return read16(this.bytes, this.lenTAt, this.lenTWide, i);
  }
  lenB(i: number): number {
    return read16(this.bytes, this.lenBAt, this.lenBWide, i);
  }
}

/** Value i of a column of 1- or 2-byte values from `at`. */
function read16(bytes: Uint8Array, at: number, wide: boolean, i: number): number {
  return wide ? bytes[at + 2 * i]! | (bytes[at + 2 * i + 1]! << 8) : bytes[at + i]!;
}

function readColumn(bytes: Uint8Array, at: number, count: number, width: number, into: Uint16Array): number {
  if (width === 1) {
    // A copy that widens each byte, done by the engine: faster than a loop in JavaScript.
    into.set(bytes.subarray(at, at + count));
    return at + count;
  }
  // Counts and lengths fit 16 bits (MAX_FIELD_WORDS): a 4-byte width never occurs for them.
  for (let i = 0; i < count; i++, at += 2) into[i] = bytes[at]! | (bytes[at + 1]! << 8);
  return at;
}

/** A sealed block decoded whole, positions included, as the phrase search and the writer read it; into `into`'s arrays when given. */
export function decodeSealed(block: SealedBlock, into?: FullColumns): Block {
  const c = decodeScores(block.scores, into);
  const n = block.positions.byteLength / 2;
  let positions = into?.positions;
  if (!positions || positions.length < n) positions = new Uint16Array(into ? Math.max(n, 2 * (positions?.length ?? 0)) : n);
  for (let i = 0, at = 0; i < n; i++, at += 2) positions[i] = block.positions[at]! | (block.positions[at + 1]! << 8);
  if (!into) return { count: c.count, docs: c.docs, tfT: c.tfT, tfB: c.tfB, lenT: c.lenT, lenB: c.lenB, positions };
  into.positions = positions;
  // Each posting's first position, into an array the columns keep (positionStart would make one a block).
  let starts = into.startsBuffer;
  if (!starts || starts.length < c.count + 1) starts = into.startsBuffer = new Uint32Array(Math.max(c.count + 1, 2 * (starts?.length ?? 0)));
  starts[0] = 0;
  for (let j = 0; j < c.count; j++) starts[j + 1] = starts[j]! + c.tfT[j]! + c.tfB[j]!;
  into.starts = starts;
  return into;
}

/** A reusable place to decode a whole sealed block into (decodeSealed). */
export type FullColumns = ScoreColumns & { positions: Uint16Array; starts?: Uint32Array; startsBuffer?: Uint32Array };

/** An empty FullColumns, its arrays grown on use. */
export function fullColumns(): FullColumns {
  return { ...scoreColumns(), positions: new Uint16Array(1024) };
}
