import { BLOCK_SIZE, type Block } from './block.js';
import type { CollectionStats } from './scoring.js';
import { analyzeDocument, type SearchDocument } from './document.js';

/**
 * The tail of a tenant's index: its documents above the merge mark, which the index does not hold yet. A
 * search scores them with the index's postings and the same statistics, so a document is found, and counts
 * in every statistic, from the moment it is stored, whether or not a merge (writer.ts, `mergeTerms`) has
 * taken it in.
 *
 * What a search needs of the tail, for one tenant.
 */
export interface Tail {
  /** The statistics of the tail's documents, which add to the index's. */
  readonly stats: CollectionStats;
  /** The term's postings in the tail's documents above `after`, in document order, as blocks of at most BLOCK_SIZE. */
  postings(term: string, after: number): Block[];
  /** How many postings and positions `postings(term, after)` holds, without copying them. */
  count(term: string, after: number): { postings: number; positions: number };
}

/** One term's postings in the tail, as growing columns; `positions` holds each posting's title then body positions. */
interface TermColumns {
  docs: number[];
  tfT: number[];
  tfB: number[];
  lenT: number[];
  lenB: number[];
  /** Where each posting's positions start in `positions`; one more entry than postings. */
  starts: number[];
  positions: number[];
}

/**
 * A tenant's tail documents, analyzed once and kept in memory, in document order: a search thread keeps one
 * per tenant it searches (tail-cache.ts) and adds the documents stored since its last search.
 */
export class TenantTail implements Tail {
  private docs: number[] = [];
  /** Each document's field lengths, for the statistics. */
  private lenT: number[] = [];
  private lenB: number[] = [];
  private terms = new Map<string, TermColumns>();
  private readonly totals: CollectionStats = { docs: 0, titleWords: 0, bodyWords: 0 };

  /** Adds a document above every document the tail holds. */
  add(document: SearchDocument): void {
    const last = this.docs.at(-1);
    if (last !== undefined && document.doc <= last) throw new Error(`tail documents come in order: ${document.doc} after ${last}`);
    const { postings, lenT, lenB } = analyzeDocument(document);
    this.docs.push(document.doc);
    this.lenT.push(lenT);
    this.lenB.push(lenB);
    this.totals.docs++;
    this.totals.titleWords += lenT;
    this.totals.bodyWords += lenB;
    for (const [term, p] of postings) {
      let c = this.terms.get(term);
      if (!c) this.terms.set(term, (c = { docs: [], tfT: [], tfB: [], lenT: [], lenB: [], starts: [0], positions: [] }));
      c.docs.push(p.doc);
      c.tfT.push(p.posT.length);
      c.tfB.push(p.posB.length);
      c.lenT.push(p.lenT);
      c.lenB.push(p.lenB);
      for (const position of p.posT) c.positions.push(position);
      for (const position of p.posB) c.positions.push(position);
      c.starts.push(c.positions.length);
    }
  }

  /** Drops the documents up to `after` (a merge has taken them into the index). */
  dropThrough(after: number): void {
    const cut = firstAbove(this.docs, after);
    if (cut === 0) return;
    for (let i = 0; i < cut; i++) {
      this.totals.docs--;
      this.totals.titleWords -= this.lenT[i]!;
      this.totals.bodyWords -= this.lenB[i]!;
    }
    this.docs = this.docs.slice(cut);
    this.lenT = this.lenT.slice(cut);
    this.lenB = this.lenB.slice(cut);
    const terms = new Map<string, TermColumns>();
    for (const [term, c] of this.terms) {
      const from = firstAbove(c.docs, after);
      if (from === c.docs.length) continue;
      const base = c.starts[from]!;
      terms.set(term, {
        docs: c.docs.slice(from),
        tfT: c.tfT.slice(from),
        tfB: c.tfB.slice(from),
        lenT: c.lenT.slice(from),
        lenB: c.lenB.slice(from),
        starts: c.starts.slice(from).map((start) => start - base),
        positions: c.positions.slice(base),
      });
    }
    this.terms = terms;
  }

  /** How many documents it holds. */
  get size(): number {
    return this.docs.length;
  }

  /** Its highest document, or 0 when it is empty. */
  get lastDoc(): number {
    return this.docs.at(-1) ?? 0;
  }

  get stats(): CollectionStats {
    return { ...this.totals };
  }

  count(term: string, after: number): { postings: number; positions: number } {
    const c = this.terms.get(term);
    if (!c) return NONE;
    const from = firstAbove(c.docs, after);
    return { postings: c.docs.length - from, positions: c.starts[c.docs.length]! - c.starts[from]! };
  }

  postings(term: string, after: number): Block[] {
    const c = this.terms.get(term);
    if (!c) return [];
    const blocks: Block[] = [];
    for (let from = firstAbove(c.docs, after); from < c.docs.length; from += BLOCK_SIZE) {
      const to = Math.min(c.docs.length, from + BLOCK_SIZE);
      const base = c.starts[from]!;
      blocks.push({
        count: to - from,
        docs: Uint32Array.from(c.docs.slice(from, to)),
        tfT: Uint16Array.from(c.tfT.slice(from, to)),
        tfB: Uint16Array.from(c.tfB.slice(from, to)),
        lenT: Uint16Array.from(c.lenT.slice(from, to)),
        lenB: Uint16Array.from(c.lenB.slice(from, to)),
        positions: Uint16Array.from(c.positions.slice(base, c.starts[to]!)),
        starts: Uint32Array.from(c.starts.slice(from, to + 1), (s) => s - base),
      });
    }
    return blocks;
  }
}

/** The index of the first document above `after` in ascending `docs`. */
function firstAbove(docs: readonly number[], after: number): number {
  let lo = 0;
  let hi = docs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (docs[mid]! <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const NONE = { postings: 0, positions: 0 };

/** The tail of a tenant with no documents above the merge mark. */
export const EMPTY_TAIL: Tail = { stats: { docs: 0, titleWords: 0, bodyWords: 0 }, postings: () => [], count: () => NONE };
