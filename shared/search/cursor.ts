import type { MetaTable } from './metas.js';
import type { ScoreColumns } from './block.js';
import { clauseScore, type ClauseWeight } from './scoring.js';
import { scoreColumns, SealedDocs } from './sealed.js';
import type { PhraseLookup } from './postings.js';

/**
 * One clause's postings as the searcher walks them: block by block in document order, each block with an
 * upper bound on the score of any of its documents, read only when a document of it may enter the top k.
 * Every move is forward: a search visits documents in increasing order. A block is decoded into arrays the
 * cursor keeps, so reading one allocates nothing.
 */
export class ClauseCursor {
  /** Each block's bound (MetaTable.bounds). */
  readonly bounds: Float64Array;
  /** The largest of them: the most this clause adds to any document. */
  readonly maxBound: number;
  /** The current block: the first whose last document is at or after the last position sought. */
  index = 0;
  private loaded = -1;
  private columns: ScoreColumns | null = null;
  private readonly scratch: ScoreColumns = scoreColumns();

  constructor(
    /** The clause's place in the query: scores are summed in this order, as the oracle sums them. */
    readonly order: number,
    readonly weight: ClauseWeight,
    readonly metas: MetaTable,
    /** Block `i` into `into`; a phrase's may leave out the documents it could not score `floor` with (postings.ts). */
    private readonly load: (i: number, into: ScoreColumns, floor: number) => ScoreColumns,
    /** How many postings the clause has (a phrase: at most its rarest term's). */
    readonly postings = 0,
    /** Block `i`'s documents alone, when it is a sealed block of a term (postings.ts `loadDocs`); none for a phrase. */
    private readonly loadDocs: (i: number, into: SealedDocs) => SealedDocs | null = () => null,
    /** A phrase's lookup of one document (postings.ts), which scoreOf asks rather than matching a whole block. */
    private readonly phrase: PhraseLookup | null = null,
  ) {
    this.bounds = metas.bounds(weight);
    let max = 0;
    for (let i = 0; i < this.bounds.length; i++) if (this.bounds[i]! > max) max = this.bounds[i]!;
    this.maxBound = max;
  }

  get exhausted(): boolean {
    return this.index >= this.metas.length;
  }

  /** Moves to the first block that ends at or after `doc`. */
  seek(doc: number): void {
    const last = this.metas.last;
    const n = this.metas.length;
    let i = this.index;
    while (i < n && last[i]! < doc) i++;
    this.index = i;
  }

  /** The most the clause adds to a document in [start, end]: the largest bound of the blocks that overlap it; 0 if none. */
  windowBound(start: number, end: number): number {
    this.seek(start);
    const first = this.metas.first;
    const n = this.metas.length;
    let best = 0;
    for (let i = this.index; i < n && first[i]! <= end; i++) if (this.bounds[i]! > best) best = this.bounds[i]!;
    return best;
  }

  /** The bound of the block that would hold `doc` (moving there), or 0 when no block's range holds it. */
  boundAt(doc: number): number {
    this.seek(doc);
    return this.index < this.metas.length && this.metas.first[this.index]! <= doc ? this.bounds[this.index]! : 0;
  }

  /**
   * Block `i`, decoded (the last one read is kept; reading another reuses its arrays), with every document
   * that could score `floor` (a phrase's may lack the others: postings.ts; -Infinity, all of them).
   */
  block(i: number, floor = -Infinity): ScoreColumns {
    if (this.loaded !== i || floor < this.loadedFloor) {
      this.columns = this.load(i, this.scratch, floor);
      this.loaded = i;
      this.loadedFloor = floor;
      this.docsOf = -1;
      this.at = 0;
    }
    return this.columns!;
  }
  /** The floor the block loaded was loaded for. */
  private loadedFloor = -Infinity;

  /**
   * Where scoreOf looks from in the block it looks in: the documents it asks come in increasing order, so it
   * walks forward from the last one, at most once over a block, where a binary search per document cost
   * about seven steps each (candidates of common words are a few postings apart).
   */
  private at = 0;
  /** The block scoreOf reads its documents alone from (`loadDocs`), and which one it is (-1: none). */
  private readonly docsOnly = new SealedDocs();
  private docsOf = -1;

  /**
   * The clause's score in `doc`, at or after every document asked before; 0 when the clause is not in it.
   * A sealed block not already decoded whole has its documents decoded alone, and the one posting's counts
   * and lengths read (a clause that is not essential is asked about some of its blocks' documents).
   */
  scoreOf(doc: number): number {
    this.seek(doc);
    const index = this.index;
    if (index >= this.metas.length || this.metas.first[index]! > doc) return 0;
    if (this.phrase !== null) {
      const f = this.phrase.found;
      return this.phrase.match(doc) ? clauseScore(this.weight, f.tfT, f.tfB, f.lenT, f.lenB) : 0;
    }
    if (this.loaded !== index) {
      if (this.docsOf !== index) {
        const sealed = this.loadDocs(index, this.docsOnly);
        if (sealed === null) return this.scoreIn(this.block(index), doc);
        this.docsOf = index;
        this.at = 0;
      }
      const d = this.docsOnly;
      const i = this.walkTo(d.docs, d.count, doc);
      return i === d.count || d.docs[i] !== doc ? 0 : clauseScore(this.weight, d.tfT(i), d.tfB(i), d.lenT(i), d.lenB(i));
    }
    // The block as loaded, or loaded again whole if it was loaded for a floor.
    return this.scoreIn(this.block(index), doc);
  }

  private scoreIn(b: ScoreColumns, doc: number): number {
    const i = this.walkTo(b.docs, b.count, doc);
    return i === b.count || b.docs[i] !== doc ? 0 : clauseScore(this.weight, b.tfT[i]!, b.tfB[i]!, b.lenT[i]!, b.lenB[i]!);
  }

  /** The first of the `count` documents at or after `doc`, walking forward from the last one asked. */
  private walkTo(docs: Uint32Array, count: number, doc: number): number {
    // From the start again should a document come before the last one (no search asks so; it stays right).
    let i = this.at > 0 && docs[this.at - 1]! >= doc ? 0 : this.at;
    while (i < count && docs[i]! < doc) i++;
    this.at = i;
    return i;
  }

  /** The clause's score in the i-th document of block `b`. */
  scoreAt(b: ScoreColumns, i: number): number {
    return clauseScore(this.weight, b.tfT[i]!, b.tfB[i]!, b.lenT[i]!, b.lenB[i]!);
  }
}
