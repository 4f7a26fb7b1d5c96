/** A document and its score, as a search returns them. */
export interface ScoredDoc {
  doc: number;
  score: number;
}

/** A document of the top k, with which of the query's clauses it holds. */
export interface Entry extends ScoredDoc {
  /** Bit i set: the document holds clause i (`holds`; a clause past the 31st counts as held). */
  held: number;
}

/** The k best (score, doc) pairs seen so far, the worst on top; of two equal scores the older document is worse. */
export class TopK {
  private readonly heap: Entry[] = [];
  constructor(private readonly k: number) {}

  get full(): boolean {
    return this.heap.length >= this.k;
  }

  /** The score a document must reach to enter (documents come in increasing order, so a tie enters). */
  get threshold(): number {
    return this.full ? this.heap[0]!.score : 0;
  }

  /** Offers a document; `held` says which clauses it holds (all, unless given). */
  offer(doc: number, score: number, held = ALL_HELD): void {
    const item = { doc, score, held };
    if (!this.full) {
      this.heap.push(item);
      this.up(this.heap.length - 1);
    } else {
      this.heap[0] = item;
      this.down(0);
    }
  }

  sorted(): ScoredDoc[] {
    return this.sortedHeld().map(({ doc, score }) => ({ doc, score }));
  }

  /** The documents best first, with the clauses each holds. */
  sortedHeld(): Entry[] {
    return [...this.heap].sort((a, b) => b.score - a.score || b.doc - a.doc);
  }

  private less(a: Entry, b: Entry): boolean {
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


/** Every clause held: what a document is offered with when its clauses are not told. */
export const ALL_HELD = -1;

/** How many clauses `held` tells apart; the others count as held. */
const HELD_BITS = 31;

/** The clauses a document holds, as `held` bits, from each clause's score in it (0: not held). */
export function heldOf(contributions: Float64Array): number {
  let held = 0;
  const n = Math.min(contributions.length, HELD_BITS);
  for (let i = 0; i < n; i++) if (contributions[i]! > 0) held |= 1 << i;
  return held;
}

/** Whether `held` says the document holds clause `order`. */
export function holds(held: number, order: number): boolean {
  return order >= HELD_BITS || (held & (1 << order)) !== 0;
}
