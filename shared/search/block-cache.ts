/**
 * Sealed blocks' bytes kept between searches, on one connection, so that a term many searches read (the
 * commonest words of a large tenant) is read from the storage once rather than by every search. A
 * storage that reads cheaply (in memory) needs none; the SQLite adapter keeps one a connection
 * (posting-storage.ts), which is what decides when what it holds is stale. Reading a block from SQLite
 * costs about 1 µs, most of it making the Buffer, a Map lookup some 0.05 µs.
 *
 * It is bounded in bytes, and what goes when it is full is a whole term, the one used least recently: a
 * search touches each of its terms once, when it starts, and then reads their blocks in document order.
 * But a term goes only for one asked for more often (counted over the recent asks, as TinyLFU admits,
 * the policy of Caffeine and Ristretto): searches that between them read more blocks than the budget
 * would otherwise push each other out in turn, each reading what the one before dropped, and a search of
 * words asked once would push out the words asked all the time. So the terms asked for most stay.
 */
export interface TermBlocks {
  get(last: number): Uint8Array | undefined;
  /** Keeps `bytes` as the block whose last document is `last`, when the budget allows, and returns them. */
  put(last: number, bytes: Uint8Array): Uint8Array;
}

/** What a kept block counts for beyond its bytes: its Map entry and its Buffer's object, about. */
const ENTRY_BYTES = 96;
/** What a kept term counts for beyond its blocks. */
const TERM_BYTES = 256;

class Term implements TermBlocks {
  readonly blocks = new Map<number, Uint8Array>();
  bytes = TERM_BYTES;
  /** In the cache's list from its first block kept until it is dropped; a term with no block kept is not listed. */
  state: 'new' | 'kept' | 'dropped' = 'new';
  /** The cache had no room for more of it: until it is asked for again, the rest of its blocks are not offered. */
  full = false;

  constructor(
    private readonly cache: BlockCache,
    readonly key: string,
  ) {}

  get(last: number): Uint8Array | undefined {
    return this.blocks.get(last);
  }

  /** Out of the cache: what it kept goes, and a search that still holds it keeps nothing more. */
  drop(): void {
    this.state = 'dropped';
    this.blocks.clear();
  }

  put(last: number, bytes: Uint8Array): Uint8Array {
    if (this.full || this.blocks.has(last)) return bytes;
    const size = bytes.byteLength + ENTRY_BYTES;
    if (!this.cache.makeRoom(this, size)) {
      this.full = true;
      return bytes;
    }
    this.blocks.set(last, bytes);
    this.bytes += size;
    return bytes;
  }
}

/** How many terms asked for as often as the one to keep a drop passes over before it gives up. */
const PASSED_MOST = 16;

/** How many keys' asks are counted before every count is halved (and the keys at 0 forgotten). */
const USES_KEPT = 1 << 16;

export class BlockCache {
  /** The terms, least recently used first (a Map keeps its insertion order). */
  private readonly terms = new Map<string, Term>();
  private total = 0;
  /** How often each key was asked for lately, kept or not: what decides which of two terms stays. */
  private readonly uses = new Map<string, number>();
  private asks = 0;

  constructor(readonly budget: number) {}

  /** The bytes it holds, the entries' own included. */
  get bytes(): number {
    return this.total;
  }

  /** How many terms it holds. */
  get size(): number {
    return this.terms.size;
  }

  /** The blocks kept under `key` (a term of a tenant, and which part of its blocks), now the most recently used. */
  of(key: string): TermBlocks {
    this.use(key);
    const term = this.terms.get(key);
    if (!term) return new Term(this, key);
    this.terms.delete(key);
    this.terms.set(key, term);
    term.full = false;
    return term;
  }

  /** Counts an ask of `key`; every USES_KEPT asks, or when as many keys are counted, the counts halve. */
  private use(key: string): void {
    this.uses.set(key, (this.uses.get(key) ?? 0) + 1);
    if (++this.asks < USES_KEPT && this.uses.size < USES_KEPT) return;
    this.asks = 0;
    for (const [k, n] of this.uses) {
      if (n < 2) this.uses.delete(k);
      else this.uses.set(k, n >> 1);
    }
  }

  /** How often `key` was asked for lately (halved now and then). */
  usesOf(key: string): number {
    return this.uses.get(key) ?? 0;
  }

  clear(): void {
    for (const term of this.terms.values()) term.drop();
    this.terms.clear();
    this.total = 0;
  }

  /**
   * Makes room for `size` more bytes of `term`, dropping the terms used least recently but `term` itself,
   * each only if it was asked for less often than `term`; false when that is not enough (the term alone
   * would pass the budget, or the term next to go is asked for as often) or `term` was dropped (the search
   * that holds it then reads on without keeping).
   */
  makeRoom(term: Term, size: number): boolean {
    if (term.state === 'dropped') return false;
    // A term's first block brings the term's own bytes too.
    const adding = term.state === 'new' ? size + term.bytes : size;
    if (this.total + adding > this.budget) {
      // The terms to drop, least recently used first, passing over those asked for as often as `term` (at
      // most PASSED_MOST of them): chosen before any goes, so that none goes for a term then not kept.
      const uses = this.usesOf(term.key);
      const going: Term[] = [];
      let freed = 0;
      let passed = 0;
      for (const [key, oldest] of this.terms) {
        if (this.total - freed + adding <= this.budget) break;
        if (oldest === term) continue;
        if (this.usesOf(key) >= uses) {
          if (++passed > PASSED_MOST) break;
          continue;
        }
        going.push(oldest);
        freed += oldest.bytes;
      }
      if (this.total - freed + adding > this.budget) return false;
      for (const gone of going) {
        this.terms.delete(gone.key);
        gone.drop();
      }
      this.total -= freed;
    }
    if (term.state === 'new') {
      // Another search may have listed the same key meanwhile: that one is dropped, this one kept.
      const other = this.terms.get(term.key);
      if (other) {
        this.terms.delete(term.key);
        other.drop();
        this.total -= other.bytes;
      }
      this.terms.set(term.key, term);
      term.state = 'kept';
    }
    this.total += adding;
    return true;
  }
}
