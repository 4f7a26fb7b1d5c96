import { existsSync } from 'node:fs';
import { createServer, request, type ClientRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client, aRecord } from '../support/local-service.js';
import { admin, killAll, removeDir, runProgram, startServer, tempDir, waitFor, type Exit, type ServerProcess } from '../support/child-server.js';

/** `npm start` as a process: the first-start key, graceful shutdown on SIGTERM and SIGINT, bad configuration. */

let dir: string;
const servers: ServerProcess[] = [];
/** The key the first start printed. */
let firstKey: string;
/** The records written by requests that were in flight when SIGTERM arrived. */
const inFlight: { id: string; token: string }[] = [];

beforeAll(() => {
  dir = tempDir('memory-server-');
});

afterAll(async () => {
  killAll();
  await Promise.all(servers.map((s) => s.closed));
  removeDir(dir);
});

async function start(): Promise<ServerProcess> {
  const server = await startServer(dir);
  servers.push(server);
  return server;
}

/** Waits for the exit, failing after `ms` (a hang would otherwise only show as a test timeout). */
async function exitWithin(server: ServerProcess, ms: number): Promise<Exit> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the server did not exit within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([server.closed, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A write whose headers the server has read (it answered `100 Continue`) and whose body is held back until
 * `send()`: a request that is certainly in flight inside the server.
 */
async function heldWrite(url: string, apiKey: string, record: unknown) {
  const body = JSON.stringify(record);
  const target = new URL('/api/v1/record', url);
  let req!: ClientRequest;
  const response = new Promise<{ status: number; body: any }>((resolve, reject) => {
    req = request(
      target,
      {
        method: 'POST',
        agent: false,
        headers: {
          Authorization: `Bearer ${apiKey}`,
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
          Expect: '100-continue',
        },
      },
      (res: IncomingMessage) => {
        let text = '';
        res.setEncoding('utf8').on('data', (s: string) => (text += s));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
  });
  await new Promise<void>((resolve, reject) => {
    req.once('continue', () => resolve());
    // An early answer (say a 401) ends the wait too; the caller then sees its status.
    response.then(() => resolve(), reject);
    req.flushHeaders();
  });
  return { send: () => req.end(body), response };
}

test('the first start prints the default tenant key once with a curl example; SIGTERM finishes requests in flight and exits 0', async () => {
  const server = await start();
  await waitFor(() => /curl[\s\S]*query/.test(server.stdout()), 5000, 'the first-start message');
  const out = server.stdout();
  expect(out).toMatch(/tenant "default"/);
  const keys = out.match(/mem_[A-Za-z0-9_-]+/g) ?? [];
  expect(keys.length).toBeGreaterThan(0);
  firstKey = keys[0]!;
  // One key, shown in the message and reused in the curl lines.
  expect(new Set(keys)).toEqual(new Set([firstKey]));
  expect(out).toContain(`curl -s -X POST ${server.url}/api/v1/record -H 'Authorization: Bearer ${firstKey}'`);

  const api = new Client(server.url, firstKey);
  expect((await api.remember(aRecord())).status).toBe(201);

  // Three writes inside the server, waiting for their bodies, when SIGTERM arrives.
  const tokens = ['inflightalpha', 'inflightbravo', 'inflightcharlie'];
  const held = await Promise.all(tokens.map((token) => heldWrite(server.url, firstKey, aRecord({ title: `held ${token}` }))));
  server.child.kill('SIGTERM');
  await waitFor(() => server.stdout().includes('SIGTERM: finishing requests in flight'), 5000, 'the shutdown message');
  expect(server.child.exitCode).toBeNull();
  for (const h of held) h.send();
  const responses = await Promise.all(held.map((h) => h.response));
  for (const [i, res] of responses.entries()) {
    expect(res.status).toBe(201);
    inFlight.push({ id: res.body.id, token: tokens[i]! });
  }

  const exit = await exitWithin(server, 5000);
  expect(exit).toEqual({ code: 0, signal: null });
  expect(server.stderr()).toBe('');
});

test('a second start on the same directory prints no key but how to make one, keeps the writes finished during shutdown, and SIGINT exits 0', async () => {
  expect(inFlight).toHaveLength(3);
  const server = await start();
  const api = new Client(server.url, firstKey);
  for (const { id, token } of inFlight) {
    const res = await api.recall({ q: token });
    expect(res.status).toBe(200);
    expect(res.body.map((r) => r.id)).toEqual([id]);
  }

  server.child.kill('SIGINT');
  const exit = await exitWithin(server, 5000);
  expect(exit).toEqual({ code: 0, signal: null });
  // The output is complete once the process has exited.
  expect(server.stdout()).toMatch(/memory service listening on/);
  expect(server.stdout()).toContain('SIGINT: finishing requests in flight');
  expect(server.stdout()).not.toMatch(/mem_|First start|curl/);
  // How to get a new key, where the first one was printed.
  expect(server.stdout()).toContain('Lost the API key? The admin CLI makes a new one, on this data directory, with no key needed:\n  npm run --silent admin -- tenant list\n  npm run --silent admin -- key create --tenant <tenant_id>\n');
});

test('a first start whose port is taken exits 1 with one clear line and stores nothing, not even the data directory; the next start prints the key', async () => {
  const fresh = join(dir, 'port-taken');
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const { port } = holder.address() as AddressInfo;
  try {
    const result = await runProgram('server', [], { PORT: String(port), MEMORY_DATA_DIR: fresh });
    expect(result.code).toBe(1);
    const next = port < 65535 ? port + 1 : 8787;
    expect(result.stderr).toBe(`cannot listen on 127.0.0.1:${port}: another process uses the port. Stop it, or choose another port, e.g. PORT=${next} npm start\n`);
    expect(result.stdout).not.toMatch(/mem_|First start|listening/);
    // So the admin CLI finds no database there, and a restore into it is allowed.
    expect(existsSync(fresh)).toBe(false);
  } finally {
    await new Promise((resolve) => holder.close(resolve));
  }

  const server = await startServer(fresh);
  servers.push(server);
  await waitFor(() => /Its API key, shown only this once:\s+mem_\S+/.test(server.stdout()), 5000, 'the first key');
  const key = /Its API key, shown only this once:\s+(mem_\S+)/.exec(server.stdout())![1]!;
  expect((await new Client(server.url, key).recall({ q: 'anything' })).status).toBe(200);
  expect(await admin(['tenant', 'list'], { MEMORY_DATA_DIR: fresh })).toEqual([expect.objectContaining({ name: 'default' })]);
  expect((await server.stop('SIGTERM')).code).toBe(0);

  // A later start whose port is taken removes nothing of a database that was there.
  const again = createServer();
  await new Promise<void>((resolve) => again.listen(0, '127.0.0.1', resolve));
  try {
    expect((await runProgram('server', [], { PORT: String((again.address() as AddressInfo).port), MEMORY_DATA_DIR: fresh })).code).toBe(1);
  } finally {
    await new Promise((resolve) => again.close(resolve));
  }
  expect(await admin(['tenant', 'list'], { MEMORY_DATA_DIR: fresh })).toEqual([expect.objectContaining({ name: 'default' })]);
});

test('an invalid configuration exits non-zero with a clear message on stderr', async () => {
  const data = join(dir, 'never-created');
  const result = await runProgram('server', [], { PORT: 'abc', MEMORY_DATA_DIR: data });
  expect(result.code).not.toBe(0);
  expect(result.code).not.toBeNull();
  expect(result.stderr).toMatch(/invalid configuration/);
  expect(result.stderr).toMatch(/PORT/);
  expect(result.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
  expect(result.stdout).not.toMatch(/listening/);
  expect(existsSync(data)).toBe(false);
});
