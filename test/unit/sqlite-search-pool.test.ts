import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { openSqliteAdapters, type SqliteAdapters } from '../../shared/adapters/local/index.js';
import { SqliteSearchPool } from '../../shared/adapters/local/search-pool.js';
import { parseQuery } from '../../shared/domain/query-parse.js';
import { newRecord } from '../../shared/domain/record.js';
import type { SearchQuery } from '../../shared/ports.js';

const TENANT = '0193a000-0000-7000-8000-000000000001';
const WORDS = ['invoice', 'refund', 'deploy', 'latency', 'customer', 'renewal', 'outage', 'dashboard'];

let dir: string;
let adapters: SqliteAdapters;
let pool: SqliteSearchPool;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'memory-pool-'));
  adapters = openSqliteAdapters(join(dir, 'memory.db'));
  const at = Date.parse('2026-11-20T10:00:00.000Z');
  for (let i = 0; i < 200; i++) {
    const title = `${WORDS[i % WORDS.length]} ${WORDS[(i * 3) % WORDS.length]} note ${i}`;
    const body = `The ${WORDS[(i * 5) % WORDS.length]} was discussed with the team, item ${i}.`;
    const record = newRecord(TENANT, { agent_id: `agent-${i % 3}`, type: 'fact', title, body, client: null, metadata: i % 2 ? { i } : null }, new Date(at + i));
    await adapters.records.create(TENANT, record, { recordQuota: 1000, month: '2026-11' });
  }
  pool = new SqliteSearchPool(join(dir, 'memory.db'), 2);
});

afterAll(async () => {
  await pool.close();
  adapters.close();
  rmSync(dir, { recursive: true, force: true });
});

const query = (q: string | null, extra: Partial<SearchQuery> = {}): SearchQuery => ({ text: q === null ? null : parseQuery(q), limit: 10, ...extra });

/** The pool's worker threads: the tests stop one to see what a crash does. */
const threadsOf = (p: SqliteSearchPool) => (p as unknown as { threads: ({ worker: Worker } | null)[] }).threads;

describe('SQLite search on worker threads', () => {
  test('answers exactly what the search on the server thread answers, concurrently', async () => {
    const queries = [
      ...WORDS.map((w) => query(w)),
      query('refund customer', { agent_id: 'agent-1' }),
      query('"was discussed"'),
      query(null, { limit: 5 }),
      query('nothing-matches-this'),
    ];
    const pooled = await Promise.all(queries.flatMap((q) => [pool.search(TENANT, q), pool.search(TENANT, q)]));
    const direct = await Promise.all(queries.map((q) => adapters.search.search(TENANT, q)));
    expect(pooled).toEqual(direct.flatMap((hits) => [hits, hits]));
    expect(direct[0]!.length).toBeGreaterThan(0);
  });

  test('a write that has returned is found by the next search', async () => {
    const record = newRecord(TENANT, { agent_id: 'agent-9', type: 'fact', title: 'Quokka sighting', body: 'Rottnest.', client: null, metadata: null }, new Date());
    await adapters.records.create(TENANT, record, { recordQuota: 1000, month: '2026-11' });
    expect((await pool.search(TENANT, query('quokka'))).map((h) => h.id)).toEqual([record.id]);
  });

  test('a search that fails in its thread rejects with the engine error, and the threads go on', async () => {
    adapters.db.exec('ALTER TABLE records RENAME TO records_away');
    try {
      await expect(pool.search(TENANT, query(null))).rejects.toThrow(/no such table: records/);
    } finally {
      adapters.db.exec('ALTER TABLE records_away RENAME TO records');
    }
    expect(await pool.search(TENANT, query(null, { limit: 3 }))).toHaveLength(3);
  });

  test('a thread that dies fails its searches in flight and is started again by the next search', async () => {
    const [first] = threadsOf(pool);
    // Stopped before it can answer: the search goes to the first thread, the idlest (none are busy).
    const stopped = first!.worker.terminate();
    const inFlight = pool.search(TENANT, query('invoice'));
    await stopped;
    await expect(inFlight).rejects.toThrow(/search thread exited/);
    expect(threadsOf(pool)[0]).toBeNull();
    const again = await Promise.all([pool.search(TENANT, query('invoice')), pool.search(TENANT, query('invoice'))]);
    expect(threadsOf(pool)[0]).not.toBeNull();
    expect(threadsOf(pool)[0]).not.toBe(first);
    expect(again[0]!.length).toBeGreaterThan(0);
    expect(again[1]).toEqual(again[0]);
  });

  test('a thread that cannot start fails each search with the reason, without restarting in a loop', async () => {
    const missing = new SqliteSearchPool(join(dir, 'no-such.db'), 1);
    try {
      await expect(missing.search(TENANT, query('invoice'))).rejects.toThrow(/a search thread failed: cannot open .*no-such\.db/);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(threadsOf(missing)[0]).toBeNull();
      await expect(missing.search(TENANT, query('invoice'))).rejects.toThrow(/a search thread failed: cannot open .*no-such\.db/);
    } finally {
      await missing.close();
    }
  });

  test('a closed pool refuses searches', async () => {
    const closed = new SqliteSearchPool(join(dir, 'memory.db'), 1);
    await closed.close();
    await expect(closed.search(TENANT, query('invoice'))).rejects.toThrow(/closed/);
    expect(() => new SqliteSearchPool(join(dir, 'memory.db'), 0)).toThrow(/at least one thread/);
  });
});
