/**
 * The metrics server as an operator meets it (README, "Metrics"): `npm start` with MEMORY_METRICS_PORT
 * prints its URL and serves it until the server stops; without the setting nothing more listens; a metrics
 * port another process holds fails the start with a message that names the setting, and stores nothing.
 * What the metrics say is metrics.test.ts.
 */
import { afterAll, afterEach, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { startLocalService, type LocalService } from '../../local/app.js';
import { loadConfig } from '../../local/config.js';
import { freePort } from '../../local/free-port.js';
import { killAll, removeDir, startServer, tempDir, waitFor } from '../support/child-server.js';
import { parseExposition, valueOf } from '../support/prometheus-text.js';

const dirs: string[] = [];
const services: LocalService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.close()));
});
afterAll(() => {
  killAll();
  for (const dir of dirs) removeDir(dir);
});

function dataDir(): string {
  const dir = tempDir('memory-metrics-');
  dirs.push(dir);
  return dir;
}

/** The TCP servers listening in this process, as Node counts its resources. */
const listening = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;

/**
 * Waits (2 s at most) for this process to have `count` TCP servers: the count is the whole process's, and a
 * server closed a moment ago (here or by an earlier test in this Jest worker) leaves Node's list only once its
 * handle's close has run, a turn of the event loop later. A server that stays open fails it.
 */
async function expectListening(count: number): Promise<void> {
  await waitFor(() => listening() === count, 2_000, `${count} TCP servers in this process (there are ${listening()})`).catch(() => {
    expect(listening()).toBe(count);
  });
}

/** Whether nothing listens on the port: a server of our own can take it. */
async function portIsFree(port: number): Promise<boolean> {
  const probe = createServer();
  const free = await new Promise<boolean>((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (free) await new Promise<void>((resolve) => probe.close(() => resolve()));
  return free;
}

async function start(env: Record<string, string>): Promise<LocalService> {
  const service = await startLocalService(loadConfig({ PORT: '0', LOG_LEVEL: 'SILENT', ...env }));
  services.push(service);
  return service;
}

test('without MEMORY_METRICS_PORT nothing listens but the API; with it, one more server does', async () => {
  const before = listening();
  const plain = await start({ MEMORY_DATA_DIR: dataDir() });
  expect(plain.metricsUrl).toBeNull();
  await expectListening(before + 1);
  const metered = await start({ MEMORY_DATA_DIR: dataDir(), MEMORY_METRICS_PORT: '0' });
  expect(metered.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  await expectListening(before + 3);
  // Closing the service closes its metrics server with it.
  await metered.close();
  await expectListening(before + 1);
  await expect(fetch(metered.metricsUrl!)).rejects.toThrow();
});

test('`npm start` prints the metrics URL and serves it until it stops; without the setting it prints none', async () => {
  const server = await startServer(dataDir(), { MEMORY_METRICS_PORT: '0' });
  await waitFor(() => /^metrics: \S+$/m.test(server.stdout()), 5000, 'the metrics line');
  const url = /^metrics: (\S+)$/m.exec(server.stdout())![1]!;
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  const exposition = parseExposition(await (await fetch(url)).text());
  expect(valueOf(exposition, 'memory_http_requests_total', { route: '/healthz', method: 'GET', status: '200' })).toBe(1);
  // The first start's tenant, with nothing used yet.
  expect(valueOf(exposition, 'memory_tenants')).toBe(1);
  expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  await expect(fetch(url)).rejects.toThrow();

  const plain = await startServer(dataDir());
  await waitFor(() => plain.stdout().includes('More keys and tenants'), 5000, 'the first start lines');
  expect(plain.stdout()).not.toMatch(/^metrics:/m);
  expect(plain.stdout()).not.toContain('/metrics');
  await plain.stop('SIGTERM');
});

test('a metrics port another process holds fails the start with a message naming MEMORY_METRICS_PORT, and stores nothing', async () => {
  const holder: Server = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const taken = (holder.address() as AddressInfo).port;
  const dir = dataDir();
  const before = listening();
  const apiPort = await freePort();
  try {
    await expect(start({ MEMORY_DATA_DIR: dir, PORT: String(apiPort), MEMORY_METRICS_PORT: String(taken) })).rejects.toThrow(
      `cannot listen on 127.0.0.1:${taken}: another process uses the port. Stop it, or choose another port, e.g. MEMORY_METRICS_PORT=${taken + 1} npm start`,
    );
    // The API's server it had opened is closed again: its port is free, and no server of it is left.
    expect(await portIsFree(apiPort)).toBe(true);
    await expectListening(before);
  } finally {
    await new Promise<void>((resolve) => holder.close(() => resolve()));
  }
  // Nothing was stored: the next start on the same directory is a first start, and gives the first key.
  const service = await start({ MEMORY_DATA_DIR: dir, MEMORY_METRICS_PORT: String(taken) });
  expect(service.firstKey).not.toBeNull();
  expect(service.metricsUrl).toBe(`http://127.0.0.1:${taken}/metrics`);
});
