/**
 * Sealed blocks' bytes kept between searches, on one connection, so that a term many searches read (the
 * commonest words of a large tenant) is read from the storage once rather than by every search. A
 * storage that reads cheaply (in memory) needs none; the SQLite adapter keeps one a connection
 * (posting-storage.ts), which is what decides when what it holds is stale. Reading a block from SQLite
 * costs about 1 µs, most of it making the Buffer, a Map lookup some 0.05 µs.
 *
 * It is bounded in bytes, and what goes first when it is full is a whole term, the one used least recently:
 * a search touches each of its terms once, when it starts, and then reads their blocks in document order.
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

  constructor(
    private readonly cache: BlockCache,
    readonly key: string,
  ) {}

  get(last: number): Uint8Array | undefined {
    return this.blocks.get(last);
  }

  put(last: number, bytes: Uint8Array): Uint8Array {
    if (this.blocks.has(last)) return bytes;
    const size = bytes.byteLength + ENTRY_BYTES;
    if (!this.cache.makeRoom(this, size)) return bytes;
    this.blocks.set(last, bytes);
    this.bytes += size;
    return bytes;
  }
}

export class BlockCache {
  /** The terms, least recently used first (a Map keeps its insertion order). */
  private readonly terms = new Map<string, Term>();
  private total = 0;

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
    const term = this.terms.get(key);
    if (!term) return new Term(this, key);
    this.terms.delete(key);
    this.terms.set(key, term);
    return term;
  }

  clear(): void {
    for (const term of this.terms.values()) term.state = 'dropped';
    this.terms.clear();
    this.total = 0;
  }

  /**
   * Makes room for `size` more bytes of `term`, dropping the terms used least recently but `term` itself;
   * false when even that is not enough (the term alone would pass the budget) or `term` was dropped (the
   * search that holds it then reads on without keeping).
   */
  makeRoom(term: Term, size: number): boolean {
    if (term.state === 'dropped') return false;
    // A term's first block brings the term's own bytes too.
    const adding = term.state === 'new' ? size + term.bytes : size;
    for (const [key, oldest] of this.terms) {
      if (this.total + adding <= this.budget) break;
      if (oldest === term) continue;
      this.terms.delete(key);
      oldest.state = 'dropped';
      this.total -= oldest.bytes;
    }
    if (this.total + adding > this.budget) return false;
    if (term.state === 'new') {
      // Another search may have listed the same key meanwhile: that one is dropped, this one kept.
      const other = this.terms.get(term.key);
      if (other) {
        this.terms.delete(term.key);
        other.state = 'dropped';
        this.total -= other.bytes;
      }
      this.terms.set(term.key, term);
      term.state = 'kept';
    }
    this.total += adding;
    return true;
  }
}
