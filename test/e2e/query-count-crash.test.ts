import { Client } from '../support/local-service.js';
import { admin, killAll, removeDir, startServer, tempDir, type ServerProcess } from '../support/child-server.js';

/**
 * The query counter commits without an fsync of its own (synchronous = NORMAL on its own connection), so a
 * count must still survive a crash of the process: every search answered 200 before a SIGKILL is counted
 * after the restart, and the quota stops the tenant exactly at its limit across the crash.
 */

let dataDir: string;
const servers: ServerProcess[] = [];

beforeAll(() => {
  dataDir = tempDir('memory-count-crash-');
});

afterAll(async () => {
  killAll();
  await Promise.all(servers.map((s) => s.closed));
  removeDir(dataDir);
});

const QUOTA = 25;
const BEFORE_CRASH = 17;

test('searches counted before a SIGKILL are still counted after the restart, and the quota holds at its boundary', async () => {
  const env = { MEMORY_DATA_DIR: dataDir };
  const first = await startServer(dataDir);
  servers.push(first);
  const tenant = await admin(
    ['tenant', 'create', '--name', 'counted', '--record-quota', '100', '--query-quota', String(QUOTA), '--rate', '100000', '--burst', '100000'],
    env,
  );
  const api = new Client(first.url, tenant.api_key);
  expect((await api.remember({ agent_id: 'a', type: 'fact', title: 'The zebra crossing', body: 'Near the station.' })).status).toBe(201);

  // Both kinds: the newest records (run on the server's thread) and a word search (bounded too), and a
  // filtered search without q (run on a search thread).
  const search = (client: Client, i: number) =>
    i % 3 === 0 ? client.recall() : i % 3 === 1 ? client.recall({ q: 'zebra' }) : client.recall({ agent_id: 'a' });
  for (let i = 0; i < BEFORE_CRASH; i++) expect((await search(api, i)).status).toBe(200);

  first.child.kill('SIGKILL');
  expect((await first.closed).signal).toBe('SIGKILL');

  const usage = await admin(['usage', '--tenant', tenant.tenant_id], env);
  expect(usage).toEqual([expect.objectContaining({ tenant_id: tenant.tenant_id, records: 1, queries: BEFORE_CRASH })]);

  const second = await startServer(dataDir);
  servers.push(second);
  const api2 = new Client(second.url, tenant.api_key);
  for (let i = BEFORE_CRASH; i < QUOTA; i++) expect((await search(api2, i)).status).toBe(200);
  const over = await api2.recall({ q: 'zebra' });
  expect(over.status).toBe(429);
  expect(over.body).toMatchObject({ error: 'query_quota_exceeded' });
  await second.stop('SIGTERM');
  expect(await admin(['usage', '--tenant', tenant.tenant_id], env)).toEqual([expect.objectContaining({ queries: QUOTA })]);
});
