import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { nodeFetch } from '../../cli/node-fetch.js';
import { MemoryClient, MemoryConnectionError, MemoryTimeoutError } from '../../sdk/src/index.js';

/** What the server was sent, and how each path answers. */
let received: { method?: string; headers: IncomingMessage['headers']; body: string }[] = [];
const ROUTES: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  '/hello': (_req, res) => {
    res.writeHead(201, { 'Content-Type': 'application/json', 'Retry-After': '3' });
    // In pieces, with a character split between two of them.
    const bytes = Buffer.from('{"text":"héllo wörld"}');
    res.write(bytes.subarray(0, 11));
    setTimeout(() => res.end(bytes.subarray(11)), 5);
  },
  '/silent': () => undefined,
  '/cut': (_req, res) => {
    res.writeHead(200, { 'Content-Length': '100' });
    res.write('{"part');
    setTimeout(() => res.socket?.destroy(), 5);
  },
  '/api/v1/usage': (_req, res) => void setTimeout(() => res.end('{}'), 2_000),
};

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (s: string) => (body += s));
    req.on('end', () => {
      received.push({ method: req.method, headers: req.headers, body });
      ROUTES[req.url ?? '']?.(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const signal = () => AbortSignal.timeout(5_000);

test('sends the method, headers and UTF-8 body, and answers the status, headers and whole text', async () => {
  received = [];
  const answer = await nodeFetch(`${base}/hello`, { method: 'POST', headers: { Authorization: 'Bearer x' }, body: '{"title":"café"}', signal: signal() });
  expect(answer).toMatchObject({ status: 201, ok: true });
  expect(answer.headers.get('retry-after')).toBe('3');
  expect(answer.headers.get('Retry-After')).toBe('3');
  expect(answer.headers.get('X-None')).toBeNull();
  expect(await answer.text()).toBe('{"text":"héllo wörld"}');
  expect(received).toEqual([
    { method: 'POST', headers: expect.objectContaining({ authorization: 'Bearer x', 'content-length': String(Buffer.byteLength('{"title":"café"}')) }), body: '{"title":"café"}' },
  ]);
});

test('an aborted call rejects with the signal reason, and so does one whose signal was aborted before it began', async () => {
  const controller = new AbortController();
  const call = nodeFetch(`${base}/silent`, { method: 'GET', headers: {}, signal: controller.signal });
  setTimeout(() => controller.abort(new Error('enough')), 20);
  await expect(call).rejects.toThrow('enough');
  await expect(nodeFetch(`${base}/silent`, { method: 'GET', headers: {}, signal: controller.signal })).rejects.toThrow('enough');
});

test('a refused connection rejects with its system code, and an answer cut short fails its text', async () => {
  await expect(nodeFetch('http://127.0.0.1:9/', { method: 'GET', headers: {}, signal: signal() })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  const cut = await nodeFetch(`${base}/cut`, { method: 'GET', headers: {}, signal: signal() });
  await expect(cut.text()).rejects.toThrow();
});

test("the SDK over it: its deadline is a MemoryTimeoutError, a refused connection a MemoryConnectionError that says why", async () => {
  const slow = new MemoryClient({ baseUrl: base, apiKey: 'mem_x', fetch: nodeFetch, timeoutMs: 100, maxRetries: 0 });
  await expect(slow.usage()).rejects.toBeInstanceOf(MemoryTimeoutError);
  const nowhere = new MemoryClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'mem_x', fetch: nodeFetch, maxRetries: 0 });
  await expect(nowhere.usage()).rejects.toThrow(MemoryConnectionError);
  await expect(nowhere.usage()).rejects.toThrow(/ECONNREFUSED/);
});
