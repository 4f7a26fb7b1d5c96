import { MAX_FIELD_WORDS, type Block, type Posting } from './block.js';
import { clauseScore, type ClauseWeight } from './scoring.js';

/**
 * What bounds a block's scores without reading it: its document range, its extreme counts and lengths,
 * and its impacts.
 *
 * The extremes (the largest counts, the shortest fields, each over the whole block) bound any document's
 * score for any parameters, but loosely: they mix the best of different documents. The impacts are the
 * block's documents that are best for some query, as Lucene keeps (frequency, norm) pairs: with the title
 * weight w the index is written for (ranking.ts), a document has a weighted count c = w·tfT + tfB and length d = w·lenT + lenB, a
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
  /**
   * The title weight the impacts were computed for, in hundredths: a search with another one (a stored
   * index after the ranking changed, or the tuning grid) bounds the block by its extremes instead.
   */
  impactWeight: number;
}

/** A title weight as the metas store it: in hundredths. */
const hundredths = (weight: number) => Math.round(weight * 100);

/** The most impacts a block keeps. */
export const MAX_IMPACTS = 8;

/** The meta of postings in document order, its impacts kept for the title weight `impactWeight`. */
export function metaOf(postings: readonly Posting[], impactWeight: number): BlockMeta {
  return metaOfColumns(impactWeight, {
    count: postings.length,
    docs: Uint32Array.from(postings, (p) => p.doc),
    tfT: Uint16Array.from(postings, (p) => p.posT.length),
    tfB: Uint16Array.from(postings, (p) => p.posB.length),
    lenT: Uint16Array.from(postings, (p) => p.lenT),
    lenB: Uint16Array.from(postings, (p) => p.lenB),
  });
}

/**
 * The meta of a decoded block (the open block, whose meta is not stored), or of its postings `from` to
 * `to`, its impacts kept for the title weight `impactWeight`.
 */
export function metaOfBlock(block: Block, impactWeight: number, from = 0, to = block.count): BlockMeta {
  if (from === 0 && to === block.count) return metaOfColumns(impactWeight, block);
  return metaOfColumns(impactWeight, {
    count: to - from,
    docs: block.docs.subarray(from, to),
    tfT: block.tfT.subarray(from, to),
    tfB: block.tfB.subarray(from, to),
    lenT: block.lenT.subarray(from, to),
    lenB: block.lenB.subarray(from, to),
  });
}

function metaOfColumns(impactWeight: number, b: Pick<Block, 'count' | 'docs' | 'tfT' | 'tfB' | 'lenT' | 'lenB'>): BlockMeta {
  let maxTfT = 0;
  let maxTfB = 0;
  let minLenT = MAX_FIELD_WORDS;
  let minLenB = MAX_FIELD_WORDS;
  for (let i = 0; i < b.count; i++) {
    if (b.tfT[i]! > maxTfT) maxTfT = b.tfT[i]!;
    if (b.tfB[i]! > maxTfB) maxTfB = b.tfB[i]!;
    if (b.lenT[i]! < minLenT) minLenT = b.lenT[i]!;
    if (b.lenB[i]! < minLenB) minLenB = b.lenB[i]!;
  }
  return {
    first: b.docs[0]!,
    last: b.docs[b.count - 1]!,
    count: b.count,
    maxTfT,
    maxTfB,
    minLenT,
    minLenB,
    impacts: impactsOf(b, impactWeight),
    impactWeight: hundredths(impactWeight),
  };
}

/** The block's Pareto front at title weight `w` (see BlockMeta), merged down to MAX_IMPACTS. */
function impactsOf(b: Pick<Block, 'count' | 'tfT' | 'tfB' | 'lenT' | 'lenB'>, w: number): Uint16Array {
  const n = b.count;
  const c = new Float64Array(n);
  const d = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    c[i] = w * b.tfT[i]! + b.tfB[i]!;
    d[i] = w * b.lenT[i]! + b.lenB[i]!;
  }
  const order = new Uint16Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort((x, y) => c[y]! - c[x]! || d[x]! - d[y]!);
  // By count, highest first: a document is on the front when it is shorter than every one counted higher.
  const front = new Uint16Array(n);
  let size = 0;
  let shortest = Infinity;
  for (let k = 0; k < n; k++) {
    const i = order[k]!;
    if (d[i]! < shortest) {
      front[size++] = i;
      shortest = d[i]!;
    }
  }
  const groups = Math.min(size, MAX_IMPACTS);
  const impacts = new Uint16Array(4 * groups);
  for (let g = 0; g < groups; g++) {
    // Neighbours on the front, merged into one that dominates them: the largest counts, the shortest fields.
    let tfT = 0;
    let tfB = 0;
    let lenT = MAX_FIELD_WORDS;
    let lenB = MAX_FIELD_WORDS;
    for (let k = Math.floor((g * size) / groups); k < Math.floor(((g + 1) * size) / groups); k++) {
      const i = front[k]!;
      if (b.tfT[i]! > tfT) tfT = b.tfT[i]!;
      if (b.tfB[i]! > tfB) tfB = b.tfB[i]!;
      if (b.lenT[i]! < lenT) lenT = b.lenT[i]!;
      if (b.lenB[i]! < lenB) lenB = b.lenB[i]!;
    }
    impacts[4 * g] = tfT;
    impacts[4 * g + 1] = tfB;
    impacts[4 * g + 2] = lenT;
    impacts[4 * g + 3] = lenB;
  }
  return impacts;
}

/**
 * The metas of a term's sealed blocks, as stored, one after another: u32 first, u32 last, u16 count,
 * maxTfT, maxTfB, minLenT, minLenB, u16 the number of impacts, u16 their title weight in hundredths, then
 * each impact's four u16.
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
    const u16 = [m.count, m.maxTfT, m.maxTfB, m.minLenT, m.minLenB, m.impacts.length / 4, m.impactWeight, ...m.impacts];
    at += 8;
    for (const v of u16) {
      view.setUint16(at, v, true);
      at += 2;
    }
  }
  return bytes;
}

const META_HEADER = 8 + 2 * 7;

export function decodeMetas(bytes: Uint8Array): BlockMeta[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const metas: BlockMeta[] = [];
  let at = 0;
  while (at < bytes.byteLength) {
    const u16 = (i: number) => view.getUint16(at + 8 + 2 * i, true);
    const impacts = new Uint16Array(4 * u16(5));
    for (let i = 0; i < impacts.length; i++) impacts[i] = u16(7 + i);
    metas.push({ first: view.getUint32(at, true), last: view.getUint32(at + 4, true), count: u16(0), maxTfT: u16(1), maxTfB: u16(2), minLenT: u16(3), minLenB: u16(4), impacts, impactWeight: u16(6) });
    at += META_HEADER + 2 * impacts.length;
  }
  return metas;
}


const u16 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8);
const u32 = (b: Uint8Array, at: number) => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;

/** Where each meta of `bytes` (`encodeMetas`) starts: a meta's length depends on its number of impacts. */
function metaOffsets(bytes: Uint8Array): number[] {
  const offsets: number[] = [];
  for (let at = 0; at < bytes.byteLength; at += META_HEADER + 8 * u16(bytes, at + 18)) offsets.push(at);
  return offsets;
}

/**
 * A bound on the positions the stored blocks of `bytes` (`encodeMetas`) hold, from their metas alone: each
 * block's count times its largest title and body counts. What a phrase may read of them (cost.ts).
 */
export function positionsBound(bytes: Uint8Array): number {
  let bound = 0;
  for (const at of metaOffsets(bytes)) bound += u16(bytes, at + 8) * (u16(bytes, at + 10) + u16(bytes, at + 12));
  return bound;
}

/** The most positions one document of the stored blocks of `bytes` holds, from their metas alone: the largest title count plus the largest body count. */
export function positionsPerDocumentBound(bytes: Uint8Array): number {
  let bound = 0;
  for (const at of metaOffsets(bytes)) bound = Math.max(bound, u16(bytes, at + 10) + u16(bytes, at + 12));
  return bound;
}

/**
 * The metas a search reads, as columns: each block's first and last document, and its bound for a clause,
 * read straight from the stored bytes (no object per block; a common word has thousands of blocks), then the
 * metas of the blocks that are not stored (the open block, the tail's).
 */
export class MetaTable {
  readonly length: number;
  readonly first: Uint32Array;
  readonly last: Uint32Array;

  private constructor(
    private readonly sealed: Uint8Array,
    /** Where each stored meta starts in `sealed`. */
    private readonly offsets: Uint32Array,
    private readonly extra: readonly BlockMeta[],
  ) {
    this.length = offsets.length + extra.length;
    this.first = new Uint32Array(this.length);
    this.last = new Uint32Array(this.length);
    for (let i = 0; i < offsets.length; i++) {
      this.first[i] = u32(sealed, offsets[i]!);
      this.last[i] = u32(sealed, offsets[i]! + 4);
    }
    extra.forEach((m, i) => {
      this.first[offsets.length + i] = m.first;
      this.last[offsets.length + i] = m.last;
    });
  }

  /** The stored metas (`encodeMetas`' bytes, or null), then `extra`. */
  static of(sealed: Uint8Array | null, extra: readonly BlockMeta[]): MetaTable {
    const bytes = sealed ?? new Uint8Array(0);
    return new MetaTable(bytes, Uint32Array.from(metaOffsets(bytes)), extra);
  }

  /** How many of the blocks are stored (the first ones). */
  get stored(): number {
    return this.offsets.length;
  }

  /** Each block's bound for a clause of weight `w`: the most any of its documents can score. */
  bounds(w: ClauseWeight): Float64Array {
    const out = new Float64Array(this.length);
    const b = this.sealed;
    const weight = hundredths(w.titleWeight);
    for (let i = 0; i < this.offsets.length; i++) {
      const at = this.offsets[i]!;
      const impacts = u16(b, at + 18);
      if (impacts === 0 || u16(b, at + 20) !== weight) {
        out[i] = clauseScore(w, u16(b, at + 10), u16(b, at + 12), u16(b, at + 14), u16(b, at + 16));
        continue;
      }
      let best = 0;
      for (let j = 0, p = at + META_HEADER; j < impacts; j++, p += 8) {
        const s = clauseScore(w, u16(b, p), u16(b, p + 2), u16(b, p + 4), u16(b, p + 6));
        if (s > best) best = s;
      }
      out[i] = best;
    }
    this.extra.forEach((m, i) => (out[this.offsets.length + i] = blockBound(w, m)));
    return out;
  }
}

/** The most a document of the block can score: exact from its impacts, or from its extremes for another title weight. */
export function blockBound(w: ClauseWeight, m: BlockMeta): number {
  if (m.impacts.length === 0 || m.impactWeight !== hundredths(w.titleWeight)) return clauseScore(w, m.maxTfT, m.maxTfB, m.minLenT, m.minLenB);
  let best = 0;
  for (let i = 0; i < m.impacts.length; i += 4) best = Math.max(best, clauseScore(w, m.impacts[i]!, m.impacts[i + 1]!, m.impacts[i + 2]!, m.impacts[i + 3]!));
  return best;
}
