/** A document and its score, as a search returns them. */
export interface ScoredDoc {
  doc: number;
  score: number;
}

/** The k best (score, doc) pairs seen so far, the worst on top; of two equal scores the older document is worse. */
export class TopK {
  private readonly heap: ScoredDoc[] = [];
  constructor(private readonly k: number) {}

  get full(): boolean {
    return this.heap.length >= this.k;
  }

  /** The score a document must reach to enter (documents come in increasing order, so a tie enters). */
  get threshold(): number {
    return this.full ? this.heap[0]!.score : 0;
  }

  offer(doc: number, score: number): void {
    const item = { doc, score };
    if (!this.full) {
      this.heap.push(item);
      this.up(this.heap.length - 1);
    } else {
      this.heap[0] = item;
      this.down(0);
    }
  }

  sorted(): ScoredDoc[] {
    return [...this.heap].sort((a, b) => b.score - a.score || b.doc - a.doc);
  }

  private less(a: ScoredDoc, b: ScoredDoc): boolean {
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

