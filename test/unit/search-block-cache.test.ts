import Database from 'better-sqlite3';
import { join } from 'node:path';
import { openReadOnlyDatabase } from '../../shared/adapters/local/database.js';
import { openSqliteAdapters } from '../../shared/adapters/local/index.js';
import { SearchMerge } from '../../shared/adapters/local/search-merge.js';
import { SqliteSearchIndex } from '../../shared/adapters/local/search-index.js';
import type { SearchMerger } from '../../shared/adapters/local/search-merger.js';
import { parseQuery } from '../../shared/domain/query-parse.js';
import { newRecord } from '../../shared/domain/record.js';
import fc from 'fast-check';
import { BlockCache, type TermBlocks } from '../../shared/search/block-cache.js';
import { loadConfig } from '../../local/config.js';
import { BLOCK_CACHE_BYTES } from '../../shared/adapters/local/search-index.js';
import { removeDir, tempDir } from '../support/child-server.js';

/**
 * The blocks a search connection keeps between searches (block-cache.ts): bounded in bytes, dropped a term
 * at a time, least recently used first; and on SQLite, dropped whole once a stored block has changed
 * (search_state.block_gen, posting-storage.ts), so that a search never reads a block as it was.
 */

const bytes = (n: number) => new Uint8Array(n);

describe('BlockCache', () => {
  test('keeps blocks within its budget, dropping the terms used least recently, a whole term at a time', () => {
    const cache = new BlockCache(10_000);
    const a = cache.of('a');
    for (let last = 1; last <= 4; last++) a.put(last, bytes(1000));
    const b = cache.of('b');
    for (let last = 1; last <= 4; last++) b.put(last, bytes(1000));
    expect(cache.size).toBe(2);
    expect(cache.bytes).toBeLessThanOrEqual(10_000);
    // 'a' used again: 'b' is now the least recently used, and goes when 'c', asked for more often, needs room.
    expect(cache.of('a').get(3)?.byteLength).toBe(1000);
    cache.of('c');
    const c = cache.of('c');
    for (let last = 1; last <= 4; last++) c.put(last, bytes(1000));
    expect(cache.of('b').get(1)).toBeUndefined();
    expect(cache.of('a').get(1)?.byteLength).toBe(1000);
    expect(cache.of('c').get(4)?.byteLength).toBe(1000);
    expect(cache.bytes).toBeLessThanOrEqual(10_000);
  });

  test('a term goes only for one asked for more often: terms asked once do not push out those asked again and again', () => {
    const cache = new BlockCache(10_000);
    for (const key of ['hot', 'warm']) {
      for (let ask = 0; ask < 3; ask++) cache.of(key);
      const term = cache.of(key);
      for (let last = 1; last <= 4; last++) term.put(last, bytes(1000));
    }
    // A scan of words asked for once each (a search that reads more than the budget): none is kept.
    for (let i = 0; i < 50; i++) {
      const once = cache.of(`once ${i}`);
      for (let last = 1; last <= 4; last++) once.put(last, bytes(1000));
      expect(once.get(1)).toBeUndefined();
    }
    expect(cache.of('hot').get(4)?.byteLength).toBe(1000);
    expect(cache.of('warm').get(4)?.byteLength).toBe(1000);
    // Asked for more often than 'hot' (now the least recently used), a term takes its place.
    for (let ask = 0; ask < 6; ask++) cache.of('new');
    const newer = cache.of('new');
    for (let last = 1; last <= 4; last++) newer.put(last, bytes(1000));
    expect(newer.get(4)?.byteLength).toBe(1000);
    expect(cache.of('hot').get(1)).toBeUndefined();
    expect(cache.of('warm').get(1)?.byteLength).toBe(1000);
    expect(cache.bytes).toBeLessThanOrEqual(10_000);
  });

  test('the counts of asks halve every 65 536 asks, so a term asked for often long ago stops holding its place', () => {
    const cache = new BlockCache(5_000);
    for (let ask = 0; ask < 4; ask++) cache.of('old');
    const old = cache.of('old');
    for (let last = 1; last <= 4; last++) old.put(last, bytes(1000));
    expect(cache.usesOf('old')).toBe(5);
    for (let i = 0; i < 2 ** 16; i++) cache.of(`other ${i % 1000}`);
    expect(cache.usesOf('old')).toBe(2);
    for (let ask = 0; ask < 3; ask++) cache.of('recent');
    const recent = cache.of('recent');
    for (let last = 1; last <= 4; last++) recent.put(last, bytes(1000));
    expect(recent.get(4)?.byteLength).toBe(1000);
    expect(cache.of('old').get(1)).toBeUndefined();
  });

  test('a term larger than the budget keeps what fits and then nothing more, without dropping itself', () => {
    const cache = new BlockCache(5_000);
    const big = cache.of('big');
    const given = bytes(2000);
    for (let last = 1; last <= 5; last++) expect(big.put(last, last === 1 ? given : bytes(2000))).toBeDefined();
    expect(big.get(1)).toBe(given);
    expect(big.get(5)).toBeUndefined();
    expect(cache.size).toBe(1);
    expect(cache.bytes).toBeLessThanOrEqual(5_000);
  });

  test('a term that is never given a block is not listed; a dropped term keeps nothing more', () => {
    const cache = new BlockCache(10_000);
    for (let i = 0; i < 100; i++) cache.of(`rare ${i}`);
    expect(cache.size).toBe(0);
    expect(cache.bytes).toBe(0);
    const held = cache.of('held');
    held.put(1, bytes(100));
    cache.clear();
    held.put(2, bytes(100));
    expect(cache.bytes).toBe(0);
    expect(cache.of('held').get(1)).toBeUndefined();
  });
});

describe('on SQLite', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir('memory-block-cache-');
  });
  afterEach(() => removeDir(dir));

  test('block_gen moves when a stored block or its positions are rewritten or deleted, not when one is added', () => {
    const file = join(dir, 'memory.db');
    openSqliteAdapters(file).close();
    const db = new Database(file);
    const gen = () => db.prepare('SELECT block_gen FROM search_state').pluck().get() as number;
    const blob = Buffer.from([1, 2, 3]);
    db.prepare('INSERT INTO search_blocks (tkey, term, last, block) VALUES (1, ?, 10, ?)').run('w', blob);
    db.prepare('INSERT INTO search_positions (tkey, term, last, positions) VALUES (1, ?, 10, ?)').run('w', blob);
    expect(gen()).toBe(0);
    db.prepare('UPDATE search_blocks SET block = ? WHERE term = ?').run(Buffer.from([4]), 'w');
    expect(gen()).toBe(1);
    db.prepare('UPDATE search_positions SET positions = ? WHERE term = ?').run(Buffer.from([4]), 'w');
    expect(gen()).toBe(2);
    db.prepare('DELETE FROM search_blocks').run();
    db.prepare('DELETE FROM search_positions').run();
    expect(gen()).toBe(4);
    db.close();
  });

  test("a search thread's connection, which keeps blocks between searches, answers as a new one does after another connection rewrote them", async () => {
    const file = join(dir, 'memory.db');
    const manual = (): SearchMerger => ({ wake: () => undefined, close: async () => undefined });
    const adapters = openSqliteAdapters(file, { merger: manual });
    const tenant = (await adapters.keys.createTenant({ name: 't', limits: { recordQuota: 1e9, rate: 1e6, burst: 1e6, queryQuota: 1e9 } })).tenant_id;
    // 600 records of one word, in sealed blocks of 128 postings; the first 100 have it in the title too, so
    // that the best hits are in the first block, which their deletes rewrite.
    for (let i = 0; i < 600; i++) {
      const record = { agent_id: 'a', type: 'fact' as const, title: `entry ${i}${i < 100 ? ' lantern' : ''}`, body: `${'lantern '.repeat(1 + (i % 7))}note ${i}` };
      await adapters.records.create(tenant, newRecord(tenant, record, new Date(Date.UTC(2026, 10, 1) + i)), { recordQuota: 1e9, month: '2026-11' });
    }
    new SearchMerge(adapters.db).next(10_000);
    const blockGen = () => adapters.db.prepare('SELECT block_gen FROM search_state').pluck().get() as number;
    const kept = new SqliteSearchIndex(openReadOnlyDatabase(file));
    const query = { text: parseQuery('lantern'), limit: 20 };
    const fresh = async () => {
      const db = openReadOnlyDatabase(file);
      try {
        return await new SqliteSearchIndex(db, { blockCacheBytes: 0 }).search(tenant, query);
      } finally {
        db.close();
      }
    };
    try {
      expect(await kept.search(tenant, query)).toEqual(await fresh());
      // The best hits go, and their blocks are rewritten on the writer's connection: the kept blocks are stale.
      const best = (await kept.search(tenant, query)).slice(0, 5);
      const gen = blockGen();
      for (const hit of best) expect(await adapters.records.delete(tenant, hit.id)).not.toBeNull();
      expect(blockGen()).toBeGreaterThan(gen);
      const after = await fresh();
      expect(after.map((h) => h.id)).not.toEqual(expect.arrayContaining(best.map((h) => h.id)));
      expect(after).toHaveLength(20);
      expect(await kept.search(tenant, query)).toEqual(after);
    } finally {
      adapters.close();
    }
  });
});

test('MEMORY_SEARCH_CACHE_MB sets the budget of each search connection, in MiB: 128 unless set, 0 for none, never below 0', () => {
  expect(loadConfig({}).searchCacheBytes).toBe(BLOCK_CACHE_BYTES);
  expect(BLOCK_CACHE_BYTES).toBe(128 * 2 ** 20);
  expect(loadConfig({ MEMORY_SEARCH_CACHE_MB: '256' }).searchCacheBytes).toBe(256 * 2 ** 20);
  expect(loadConfig({ MEMORY_SEARCH_CACHE_MB: '0' }).searchCacheBytes).toBe(0);
  expect(() => loadConfig({ MEMORY_SEARCH_CACHE_MB: '-1' })).toThrow('MEMORY_SEARCH_CACHE_MB');
});

/**
 * The cache as a state machine, against what it may answer: whatever the asks, puts and clears, a kept
 * block is the very value put for that term and last document (never another's), the bytes stay within
 * the budget, and a clear leaves nothing.
 */
describe('BlockCache, model-based', () => {
  interface Tagged {
    key: string;
    last: number;
  }
  interface Real {
    cache: BlockCache;
    handles: Map<string, TermBlocks>;
  }
  /** What each block put was put as. */
  const tags = new WeakMap<Uint8Array, Tagged>();
  type Model = { asked: Set<string> };
  const KEYS = ['a', 'b', 'c', 'd', 'e'];

  const check = (r: Real) => {
    expect(r.cache.bytes).toBeGreaterThanOrEqual(0);
    expect(r.cache.bytes).toBeLessThanOrEqual(r.cache.budget);
    for (const [key, handle] of r.handles) {
      for (let last = 0; last < 8; last++) {
        const got = handle.get(last);
        if (got !== undefined) expect(tags.get(got)).toEqual({ key, last });
      }
    }
  };
  class Ask implements fc.Command<Model, Real> {
    constructor(readonly key: string) {}
    check = () => true;
    run(m: Model, r: Real) {
      r.handles.set(this.key, r.cache.of(this.key));
      m.asked.add(this.key);
      check(r);
    }
    toString = () => `of(${this.key})`;
  }
  class Put implements fc.Command<Model, Real> {
    constructor(readonly key: string, readonly last: number, readonly size: number) {}
    check = (m: Readonly<Model>) => m.asked.has(this.key);
    run(_: Model, r: Real) {
      const value = new Uint8Array(this.size);
      tags.set(value, { key: this.key, last: this.last });
      expect(r.handles.get(this.key)!.put(this.last, value)).toBe(value);
      check(r);
    }
    toString = () => `put(${this.key}, ${this.last}, ${this.size})`;
  }
  class Clear implements fc.Command<Model, Real> {
    check = () => true;
    run(_: Model, r: Real) {
      r.cache.clear();
      expect(r.cache.bytes).toBe(0);
      for (const handle of r.handles.values()) for (let last = 0; last < 8; last++) expect(handle.get(last)).toBeUndefined();
    }
    toString = () => 'clear';
  }

  test('a kept block is always the one put for its term and document, within the budget', () => {
    const key = fc.constantFrom(...KEYS);
    const commands = fc.commands(
      [
        key.map((k) => new Ask(k)),
        fc.tuple(key, fc.integer({ min: 0, max: 7 }), fc.integer({ min: 1, max: 3000 })).map(([k, last, size]) => new Put(k, last, size)),
        fc.constant(new Clear()),
      ],
      { maxCommands: 200 },
    );
    fc.assert(
      fc.property(commands, fc.integer({ min: 2000, max: 20_000 }), (cmds, budget) => {
        fc.modelRun(() => ({ model: { asked: new Set<string>() }, real: { cache: new BlockCache(budget), handles: new Map() } }), cmds);
      }),
      { numRuns: 200, seed: 20261127 },
    );
  });
});
