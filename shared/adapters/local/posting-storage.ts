import type { Statement } from 'better-sqlite3';
import { BlockCache } from '../../search/block-cache.js';
import type { CollectionStats } from '../../search/scoring.js';
import type { SealedBlock } from '../../search/sealed.js';
import type { BlockPart, PostingStorage, TermHead } from '../../search/storage.js';
import type { Db } from './db.js';

/** better-sqlite3 binds Buffers; a view of the same bytes, no copy. */
const buffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * The search engine's parts (shared/search/storage.ts) in SQLite tables, on the connection they are given:
 * inside the record's transaction when a write indexes, read-only on a search thread. Tenants get a small
 * integer key in `search_tenants`, so the rows of the other tables do not repeat a UUID. What these tables
 * must hold, with the records and between one another, is stated once, at the top of search-merge.ts.
 */
export class SqlitePostingStorage implements PostingStorage {
  private readonly keys = new Map<string, number>();
  private readonly s: Record<string, Statement>;
  private readonly cache: BlockCache | null;
  /** The `search_state.block_gen` the cache's blocks were read under; -1 before any. */
  private cacheGen = -1;
  /** Whether the current snapshot has vouched for the cache (useCache); only then does cachedBlocks hand it out. */
  private cacheVouched = false;

  /**
   * `cacheBytes`: the budget of a cache of sealed blocks kept between searches (block-cache.ts); 0 keeps
   * none, as the merge's connection and the writes' do, which read a block at most once.
   */
  constructor(db: Db, { cacheBytes = 0 }: { cacheBytes?: number } = {}) {
    this.cache = cacheBytes > 0 ? new BlockCache(cacheBytes) : null;
    const p = (sql: string) => db.prepare(sql);
    this.s = {
      key: p('SELECT key FROM search_tenants WHERE tenant = ?').pluck(),
      stats: p('SELECT docs, title_words AS titleWords, body_words AS bodyWords FROM search_tenants WHERE tenant = ?'),
      putStats: p(`INSERT INTO search_tenants (tenant, docs, title_words, body_words) VALUES (?, ?, ?, ?)
                   ON CONFLICT (tenant) DO UPDATE SET docs = excluded.docs, title_words = excluded.title_words, body_words = excluded.body_words`),
      head: p('SELECT df, sealed_last AS sealedLast, merged, open FROM search_heads WHERE tkey = ? AND term = ?'),
      putHead: p(`INSERT INTO search_heads (tkey, term, df, sealed_last, merged, open) VALUES (?, ?, ?, ?, ?, ?)
                  ON CONFLICT (tkey, term) DO UPDATE SET df = excluded.df, sealed_last = excluded.sealed_last, merged = excluded.merged, open = excluded.open`),
      deleteHead: p('DELETE FROM search_heads WHERE tkey = ? AND term = ?'),
      metas: p('SELECT metas FROM search_metas WHERE tkey = ? AND term = ?').pluck(),
      putMetas: p('INSERT INTO search_metas (tkey, term, metas) VALUES (?, ?, ?) ON CONFLICT (tkey, term) DO UPDATE SET metas = excluded.metas'),
      deleteMetas: p('DELETE FROM search_metas WHERE tkey = ? AND term = ?'),
      block: p('SELECT block FROM search_blocks WHERE tkey = ? AND term = ? AND last = ?').pluck(),
      blockRange: p('SELECT block FROM search_blocks WHERE tkey = ? AND term = ? AND last BETWEEN ? AND ? ORDER BY last').pluck(),
      putBlock: p('INSERT INTO search_blocks (tkey, term, last, block) VALUES (?, ?, ?, ?) ON CONFLICT (tkey, term, last) DO UPDATE SET block = excluded.block'),
      deleteBlock: p('DELETE FROM search_blocks WHERE tkey = ? AND term = ? AND last = ?'),
      positions: p('SELECT positions FROM search_positions WHERE tkey = ? AND term = ? AND last = ?').pluck(),
      positionRange: p('SELECT positions FROM search_positions WHERE tkey = ? AND term = ? AND last BETWEEN ? AND ? ORDER BY last').pluck(),
      // Both halves of the blocks whose last documents a JSON array lists.
      blocksAt: p(`SELECT b.block AS scores, p.positions AS positions FROM search_blocks b
                   JOIN search_positions p ON p.tkey = b.tkey AND p.term = b.term AND p.last = b.last
                   WHERE b.tkey = ? AND b.term = ? AND b.last IN (SELECT value FROM json_each(?)) ORDER BY b.last`),
      putPositions: p(`INSERT INTO search_positions (tkey, term, last, positions) VALUES (?, ?, ?, ?)
                       ON CONFLICT (tkey, term, last) DO UPDATE SET positions = excluded.positions`),
      deletePositions: p('DELETE FROM search_positions WHERE tkey = ? AND term = ? AND last = ?'),
      mergedUpTo: p('SELECT merged_upto FROM search_state').pluck(),
      setMergedUpTo: p('UPDATE search_state SET merged_upto = ?'),
    };
  }

  /**
   * The tenant's key, or undefined before its first document. A tenant's key never changes (its row stays
   * when its last document goes, with zero counts), so it is cached for the connection's life.
   */
  private key(tenant: string): number | undefined {
    let key = this.keys.get(tenant);
    if (key === undefined) {
      key = this.s.key!.get(tenant) as number | undefined;
      if (key !== undefined) this.keys.set(tenant, key);
    }
    return key;
  }

  private requireKey(tenant: string): number {
    const key = this.key(tenant);
    if (key === undefined) throw new Error('the tenant has no search statistics yet');
    return key;
  }

  stats(tenant: string): CollectionStats | null {
    const row = this.s.stats!.get(tenant) as CollectionStats | undefined;
    return row && row.docs > 0 ? row : null;
  }

  setStats(tenant: string, stats: CollectionStats | null): void {
    const s = stats ?? { docs: 0, titleWords: 0, bodyWords: 0 };
    this.s.putStats!.run(tenant, s.docs, s.titleWords, s.bodyWords);
  }

  head(tenant: string, term: string): TermHead | null {
    const key = this.key(tenant);
    if (key === undefined) return null;
    return (this.s.head!.get(key, term) as TermHead | undefined) ?? null;
  }

  setHead(tenant: string, term: string, head: TermHead | null): void {
    const key = this.ensureKey(tenant);
    if (head === null) this.s.deleteHead!.run(key, term);
    else this.s.putHead!.run(key, term, head.df, head.sealedLast, head.merged, buffer(head.open));
  }

  metas(tenant: string, term: string): Uint8Array | null {
    const key = this.key(tenant);
    return key === undefined ? null : ((this.s.metas!.get(key, term) as Buffer | undefined) ?? null);
  }

  setMetas(tenant: string, term: string, metas: Uint8Array | null): void {
    const key = this.ensureKey(tenant);
    if (metas === null) this.s.deleteMetas!.run(key, term);
    else this.s.putMetas!.run(key, term, buffer(metas));
  }

  block(tenant: string, term: string, last: number): Uint8Array | null {
    return (this.s.block!.get(this.requireKey(tenant), term, last) as Buffer | undefined) ?? null;
  }

  blockRange(tenant: string, term: string, from: number, to: number): Uint8Array[] {
    return this.s.blockRange!.all(this.requireKey(tenant), term, from, to) as Buffer[];
  }

  positions(tenant: string, term: string, last: number): Uint8Array | null {
    return (this.s.positions!.get(this.requireKey(tenant), term, last) as Buffer | undefined) ?? null;
  }

  positionRange(tenant: string, term: string, from: number, to: number): Uint8Array[] {
    return this.s.positionRange!.all(this.requireKey(tenant), term, from, to) as Buffer[];
  }

  blocksAt(tenant: string, term: string, lasts: readonly number[]): SealedBlock[] {
    if (lasts.length === 0) return [];
    return this.s.blocksAt!.all(this.requireKey(tenant), term, JSON.stringify(lasts)) as SealedBlock[];
  }

  setBlock(tenant: string, term: string, last: number, block: SealedBlock | null): void {
    const key = this.ensureKey(tenant);
    if (block === null) {
      this.s.deleteBlock!.run(key, term, last);
      this.s.deletePositions!.run(key, term, last);
      return;
    }
    this.s.putBlock!.run(key, term, last, buffer(block.scores));
    this.s.putPositions!.run(key, term, last, buffer(block.positions));
  }

  /**
   * Vouches for the cache in the current read transaction, which read `search_state.block_gen` as `gen`:
   * what the cache holds was read under an earlier generation, and when a stored block has been rewritten
   * or deleted since (triggers on the blocks' tables move it: database.ts), it is all dropped. A block that
   * was only added needs no signal: a search asks for the blocks its snapshot's metas list, and one it
   * kept earlier on this connection, still there, is unchanged. Until `endSnapshot`, cachedBlocks hands
   * the cache out.
   */
  useCache(gen: number): void {
    if (this.cache === null) return;
    if (gen !== this.cacheGen) {
      this.cache.clear();
      this.cacheGen = gen;
    }
    this.cacheVouched = true;
  }

  /** The read transaction is over: until the next one vouches for it, the cache is not used. */
  endSnapshot(): void {
    this.cacheVouched = false;
  }

  cachedBlocks(tenant: string, term: string, part: BlockPart) {
    if (!this.cacheVouched || this.cache === null) return null;
    const key = this.key(tenant);
    return key === undefined ? null : this.cache.of(`${part}\0${key}\0${term}`);
  }

  mergedUpTo(): number {
    return this.s.mergedUpTo!.get() as number;
  }

  setMergedUpTo(upTo: number): void {
    this.s.setMergedUpTo!.run(upTo);
  }

  /** The writer sets a new tenant's statistics after its terms, so a key is made on the first write of any part. */
  private ensureKey(tenant: string): number {
    const key = this.key(tenant);
    if (key !== undefined) return key;
    this.s.putStats!.run(tenant, 0, 0, 0);
    return this.requireKey(tenant);
  }
}

/** The engine's tables (a migration in database.ts creates them). */
export const POSTING_TABLES_SQL = `
  CREATE TABLE search_tenants (
    key INTEGER PRIMARY KEY,
    tenant TEXT NOT NULL UNIQUE,
    docs INTEGER NOT NULL,
    title_words INTEGER NOT NULL,
    body_words INTEGER NOT NULL
  ) STRICT;
  CREATE TABLE search_heads (
    tkey INTEGER NOT NULL,
    term TEXT NOT NULL,
    df INTEGER NOT NULL,
    sealed_last INTEGER NOT NULL,
    merged INTEGER NOT NULL,
    open BLOB NOT NULL,
    UNIQUE (tkey, term)
  ) STRICT;
  CREATE TABLE search_metas (
    tkey INTEGER NOT NULL,
    term TEXT NOT NULL,
    metas BLOB NOT NULL,
    UNIQUE (tkey, term)
  ) STRICT;
  CREATE TABLE search_blocks (
    tkey INTEGER NOT NULL,
    term TEXT NOT NULL,
    last INTEGER NOT NULL,
    block BLOB NOT NULL,
    UNIQUE (tkey, term, last)
  ) STRICT;
  -- A sealed block is its scores (search_blocks) and its positions, apart: only a phrase reads positions.
  CREATE TABLE search_positions (
    tkey INTEGER NOT NULL,
    term TEXT NOT NULL,
    last INTEGER NOT NULL,
    positions BLOB NOT NULL,
    UNIQUE (tkey, term, last)
  ) STRICT;
  -- One row. merged_upto: the merge mark (search-merge.ts); tail_gen: counts the changes to records above it
  -- other than new ones (a delete, a new text), so that a search thread's tail cache knows to rebuild.
  -- (Migrations add last_seq, and block_gen: BLOCK_GENERATION_SQL.)
  CREATE TABLE search_state (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    merged_upto INTEGER NOT NULL,
    tail_gen INTEGER NOT NULL
  ) STRICT;
  INSERT INTO search_state (one, merged_upto, tail_gen) VALUES (1, 0, 0);
`;

/**
 * `search_state.block_gen` counts the changes to stored blocks other than new ones (a block rewritten or
 * deleted: a record's postings taken out, a block split, a tenant erased, the index rebuilt), moved by
 * triggers in the same transaction whatever makes the change, so that a connection's cache of blocks
 * (SqlitePostingStorage.useCache) knows to drop what it holds. A block's scores and positions change
 * together, so the positions' own triggers only matter to a change made to them alone.
 */
export const BLOCK_GENERATION_SQL = `
  ALTER TABLE search_state ADD COLUMN block_gen INTEGER NOT NULL DEFAULT 0;
  CREATE TRIGGER search_blocks_updated AFTER UPDATE ON search_blocks BEGIN UPDATE search_state SET block_gen = block_gen + 1; END;
  CREATE TRIGGER search_blocks_deleted AFTER DELETE ON search_blocks BEGIN UPDATE search_state SET block_gen = block_gen + 1; END;
  CREATE TRIGGER search_positions_updated AFTER UPDATE ON search_positions BEGIN UPDATE search_state SET block_gen = block_gen + 1; END;
  CREATE TRIGGER search_positions_deleted AFTER DELETE ON search_positions BEGIN UPDATE search_state SET block_gen = block_gen + 1; END;
`;
