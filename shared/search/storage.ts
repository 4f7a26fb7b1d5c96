import type { TermBlocks } from './block-cache.js';
import type { CollectionStats } from './scoring.js';
import type { SealedBlock } from './sealed.js';

/**
 * A term's head: how many of the tenant's documents hold it, where its sealed blocks end, and its open
 * block, the last one, which new documents are appended to until it is sealed.
 */
export interface TermHead {
  df: number;
  /** The last document of the last sealed block; 0 when the term has none. Open-block documents are above it. */
  sealedLast: number;
  /**
   * The term's own merge mark: the index holds the term's postings of every document up to
   * max(merged, the storage's mergedUpTo). A merge (writer.ts, `mergeTerms`) sets it for each term it has
   * written, so that a merge cut short part-way is consistent term by term, and resumes without adding a
   * posting twice.
   */
  merged: number;
  /** The open block, encoded (block.ts); may be empty. */
  open: Uint8Array;
}

/**
 * Where the index keeps its parts, per tenant (an opaque key) and term. The SQLite adapter implements it
 * on tables written in the record's own transaction; the tests and benchmarks have an in-memory one.
 * Setting a part to null removes it.
 */
export interface PostingStorage {
  stats(tenant: string): CollectionStats | null;
  setStats(tenant: string, stats: CollectionStats | null): void;
  head(tenant: string, term: string): TermHead | null;
  setHead(tenant: string, term: string, head: TermHead | null): void;
  /** The metas of the term's sealed blocks (block.ts `encodeMetas`), in document order. */
  metas(tenant: string, term: string): Uint8Array | null;
  setMetas(tenant: string, term: string, metas: Uint8Array | null): void;
  /** A sealed block's scores (sealed.ts), by its last document. */
  block(tenant: string, term: string, last: number): Uint8Array | null;
  /** The scores of the sealed blocks whose last documents are `from` to `to` (both included), in document order. */
  blockRange(tenant: string, term: string, from: number, to: number): Uint8Array[];
  /** A sealed block's positions (sealed.ts), by its last document. */
  positions(tenant: string, term: string, last: number): Uint8Array | null;
  /** The positions of the sealed blocks whose last documents are `from` to `to` (both included), in document order. */
  positionRange(tenant: string, term: string, from: number, to: number): Uint8Array[];
  /**
   * Sealed blocks whole (scores and positions), by their last documents, given in increasing order: the
   * blocks that hold a few documents far apart, read at once (what proximity reads, searcher.ts).
   */
  blocksAt(tenant: string, term: string, lasts: readonly number[]): SealedBlock[];
  setBlock(tenant: string, term: string, last: number, block: SealedBlock | null): void;
  /**
   * The term's sealed blocks kept between searches (block-cache.ts), their scores or their positions: a
   * search looks for a block there before reading it, and keeps what it reads. Null when the storage keeps
   * none, or none it can vouch for now (the SQLite adapter's, outside a search's snapshot).
   */
  cachedBlocks(tenant: string, term: string, part: BlockPart): TermBlocks | null;
  /**
   * The merge mark of every tenant: each document up to it is in the index (or gone); the documents above
   * it are the tail, which a search takes from the documents themselves (tail.ts).
   */
  mergedUpTo(): number;
  setMergedUpTo(upTo: number): void;
}

/** The two halves of a sealed block (sealed.ts): what every search reads, and what a phrase reads besides. */
export type BlockPart = 'scores' | 'positions';

/** PostingStorage in memory: for tests, the oracle and the engine benchmark. */
export class MemoryPostingStorage implements PostingStorage {
  private readonly parts = new Map<string, unknown>();

  private get<T>(key: string): T | null {
    return (this.parts.get(key) as T | undefined) ?? null;
  }

  private set(key: string, value: unknown): void {
    if (value === null) this.parts.delete(key);
    else this.parts.set(key, value);
  }

  /** How many parts are stored: 0 once every document has been removed. */
  get size(): number {
    return this.parts.size;
  }

  stats(tenant: string) {
    return this.get<CollectionStats>(`s\0${tenant}`);
  }
  setStats(tenant: string, stats: CollectionStats | null) {
    this.set(`s\0${tenant}`, stats && { ...stats });
  }
  head(tenant: string, term: string) {
    return this.get<TermHead>(`h\0${tenant}\0${term}`);
  }
  setHead(tenant: string, term: string, head: TermHead | null) {
    this.set(`h\0${tenant}\0${term}`, head && { ...head });
  }
  metas(tenant: string, term: string) {
    return this.get<Uint8Array>(`m\0${tenant}\0${term}`);
  }
  setMetas(tenant: string, term: string, metas: Uint8Array | null) {
    this.set(`m\0${tenant}\0${term}`, metas);
  }
  block(tenant: string, term: string, last: number) {
    return this.get<SealedBlock>(`b\0${tenant}\0${term}\0${last}`)?.scores ?? null;
  }
  positions(tenant: string, term: string, last: number) {
    return this.get<SealedBlock>(`b\0${tenant}\0${term}\0${last}`)?.positions ?? null;
  }
  blocksAt(tenant: string, term: string, lasts: readonly number[]) {
    return lasts.flatMap((last) => this.get<SealedBlock>(`b\0${tenant}\0${term}\0${last}`) ?? []);
  }
  setBlock(tenant: string, term: string, last: number, block: SealedBlock | null) {
    this.set(`b\0${tenant}\0${term}\0${last}`, block);
    if (block === null) this.lasts.get(`${tenant}\0${term}`)?.delete(last);
    else {
      let lasts = this.lasts.get(`${tenant}\0${term}`);
      if (!lasts) this.lasts.set(`${tenant}\0${term}`, (lasts = new Set()));
      lasts.add(last);
    }
  }
  /** Its blocks are in memory already. */
  cachedBlocks(): null {
    return null;
  }
  blockRange(tenant: string, term: string, from: number, to: number) {
    return this.lastsBetween(tenant, term, from, to).map((l) => this.block(tenant, term, l)!);
  }
  positionRange(tenant: string, term: string, from: number, to: number) {
    return this.lastsBetween(tenant, term, from, to).map((l) => this.positions(tenant, term, l)!);
  }
  private lastsBetween(tenant: string, term: string, from: number, to: number): number[] {
    return [...(this.lasts.get(`${tenant}\0${term}`) ?? [])].filter((l) => l >= from && l <= to).sort((a, b) => a - b);
  }
  /** Each term's block keys, for blockRange. */
  private readonly lasts = new Map<string, Set<number>>();
  private upTo = 0;
  mergedUpTo() {
    return this.upTo;
  }
  setMergedUpTo(upTo: number) {
    this.upTo = upTo;
  }
}

/**
 * A storage's reads within one snapshot, where what the engine reads first is read once: the merge mark,
 * and each term's head and metas. The search pool bounds a search's work from these (cost.ts) and then runs
 * the search, which reads them again, on the same snapshot: through this, in one read. Blocks are passed
 * through (each is read once anyway). Read-only: the engine never writes while it searches, and writing
 * through this would leave what it keeps stale, so every setter throws.
 */
export class SnapshotReads implements PostingStorage {
  private readonly heads = new Map<string, TermHead | null>();
  private readonly metasByTerm = new Map<string, Uint8Array | null>();
  private upTo: number | undefined;

  constructor(private readonly storage: PostingStorage) {}

  stats(tenant: string) {
    return this.storage.stats(tenant);
  }
  head(tenant: string, term: string) {
    const key = `${tenant}\0${term}`;
    let head = this.heads.get(key);
    if (head === undefined) this.heads.set(key, (head = this.storage.head(tenant, term)));
    return head;
  }
  metas(tenant: string, term: string) {
    const key = `${tenant}\0${term}`;
    let metas = this.metasByTerm.get(key);
    if (metas === undefined) this.metasByTerm.set(key, (metas = this.storage.metas(tenant, term)));
    return metas;
  }
  block(tenant: string, term: string, last: number) {
    return this.storage.block(tenant, term, last);
  }
  blockRange(tenant: string, term: string, from: number, to: number) {
    return this.storage.blockRange(tenant, term, from, to);
  }
  positions(tenant: string, term: string, last: number) {
    return this.storage.positions(tenant, term, last);
  }
  positionRange(tenant: string, term: string, from: number, to: number) {
    return this.storage.positionRange(tenant, term, from, to);
  }
  blocksAt(tenant: string, term: string, lasts: readonly number[]) {
    return this.storage.blocksAt(tenant, term, lasts);
  }
  cachedBlocks(tenant: string, term: string, part: BlockPart) {
    return this.storage.cachedBlocks(tenant, term, part);
  }
  mergedUpTo() {
    return (this.upTo ??= this.storage.mergedUpTo());
  }
  setStats(): never {
    throw readOnly();
  }
  setHead(): never {
    throw readOnly();
  }
  setMetas(): never {
    throw readOnly();
  }
  setBlock(): never {
    throw readOnly();
  }
  setMergedUpTo(): never {
    throw readOnly();
  }
}

const readOnly = () => new Error("a snapshot's reads are read-only");
