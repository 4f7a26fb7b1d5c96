import { Client } from '../support/local-service.js';
import { admin, killAll, removeDir, startServer, tempDir, type ServerProcess } from '../support/child-server.js';

/**
 * The durability promise, with a real crash: "A 201 means the record is durable. After a crash the record
 * is still there, and so are its place in the search index and its classification job."
 *
 * The server runs as a child process under a write load and is killed with SIGKILL while writes are in
 * flight. After a restart on the same data directory every write that was answered 201 must be found by
 * search, and must eventually be classified.
 */

const LOOPS = 16;
const LOAD_MS = 1500;
const MIN_ACKED = 50;

let dataDir: string;
const servers: ServerProcess[] = [];

beforeAll(() => {
  dataDir = tempDir('memory-crash-');
});

afterAll(async () => {
  killAll();
  await Promise.all(servers.map((s) => s.closed));
  removeDir(dataDir);
});

interface Acked {
  id: string;
  token: string;
}

/** Runs `fn` over `items`, `width` at a time. */
async function inBatches<T, R>(items: T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map(fn))));
  return out;
}

test('every write answered 201 survives SIGKILL: stored, searchable and classified after a restart', async () => {
  const env = { MEMORY_DATA_DIR: dataDir };
  const first = await startServer(dataDir);
  servers.push(first);
  const tenant = await admin(
    ['tenant', 'create', '--name', 'crash', '--record-quota', '1000000', '--query-quota', '1000000', '--rate', '100000', '--burst', '100000'],
    env,
  );
  const api = new Client(first.url, tenant.api_key);

  // The load: LOOPS writers, each record with a unique word in its title.
  const acked: Acked[] = [];
  const unexpected: string[] = [];
  let next = 0;
  let killing = false;
  let killed = false;
  const writer = async () => {
    while (!killed) {
      const token = `crashtok${next++}`;
      let res;
      try {
        res = await api.remember({ agent_id: 'crash-agent', type: 'fact', title: `write ${token}`, body: `The body of ${token}.` });
      } catch {
        if (!killing) unexpected.push(`${token}: the request failed before the kill`);
        return; // the server is gone
      }
      if (res.status === 201) acked.push({ id: res.body.id, token });
      else unexpected.push(`${token}: ${res.status} ${JSON.stringify(res.body)}`);
    }
  };
  const writers = Array.from({ length: LOOPS }, writer);
  await new Promise((r) => setTimeout(r, LOAD_MS));

  // Crash while writes are in flight, then let the writers notice.
  killing = true;
  first.child.kill('SIGKILL');
  const exit = await first.closed;
  killed = true;
  await Promise.all(writers);
  expect(exit.signal).toBe('SIGKILL');
  expect(unexpected).toEqual([]);
  expect(acked.length).toBeGreaterThanOrEqual(MIN_ACKED);

  const second = await startServer(dataDir, { MEMORY_JOB_POLL_MS: '50' });
  servers.push(second);
  const api2 = new Client(second.url, tenant.api_key);

  // Every acknowledged record is found by its own word, and only it.
  const found = await inBatches(acked, 32, async ({ id, token }) => {
    const res = await api2.recall({ q: token });
    return { token, id, status: res.status, ids: res.status === 200 ? res.body.map((r) => r.id) : res.body };
  });
  const missing = found.filter((f) => f.status !== 200 || f.ids.length !== 1 || f.ids[0] !== f.id);
  expect(missing).toEqual([]);

  // Every acknowledged record gets its classification: its job survived the crash.
  let unclassified = acked;
  const deadline = Date.now() + 15_000;
  for (;;) {
    const results = await inBatches(unclassified, 32, async (a) => {
      const res = await api2.recall({ q: a.token });
      expect(res.status).toBe(200);
      return { a, classification: res.body[0]?.classification ?? null };
    });
    for (const { classification } of results) {
      if (classification !== null) expect(classification).toEqual(expect.objectContaining({ type: expect.any(String), model: expect.any(String) }));
    }
    unclassified = results.filter((r) => r.classification === null).map((r) => r.a);
    if (unclassified.length === 0 || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  expect(unclassified.map((a) => a.token)).toEqual([]);

  // The restart found a database with tenants in it, so it printed no new default key.
  const exit2 = await second.stop('SIGTERM');
  expect(exit2.code).toBe(0);
  expect(second.stdout()).not.toMatch(/mem_/);
  expect(second.stdout()).not.toMatch(/First start/);
  // The first start, on the empty directory, did print one.
  expect(first.stdout()).toMatch(/First start/);

});
