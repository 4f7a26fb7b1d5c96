import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  MemoryApiError,
  MemoryClient,
  MemoryConnectionError,
  MemoryTimeoutError,
  RECORD_TYPES,
  type RecordInput,
} from '../../sdk/src/index.js';
import { RECORD_TYPES as API_RECORD_TYPES } from '../../shared/domain/record.js';
import { recordReceiptSchema, searchResultsSchema, suggestionSchema, usageSchema } from '../../shared/domain/schemas.js';
import { freePort } from '../../local/free-port.js';
import { ROOT } from '../support/child-server.js';
import { countingFetch } from '../support/counting-fetch.js';
import { startTestService, type TestService } from '../support/local-service.js';

const run = promisify(execFile);

const note = (title: string): RecordInput => ({ agent_id: 'sdk-test', type: 'fact', title, body: 'Written through the SDK.' });

describe('the TypeScript SDK against the local server', () => {
  let service: TestService;
  let client: MemoryClient;

  beforeAll(async () => {
    service = await startTestService();
    client = new MemoryClient({ baseUrl: service.url, apiKey: service.tenant.api_key });
  });
  afterAll(() => service.stop());

  test('remember, recall and classify answer the API shapes, typed', async () => {
    const receipt = await client.remember({ ...note('Invoices go out on the first Monday'), client: 'acme', metadata: { source: 'sdk' } });
    expect(recordReceiptSchema.parse(receipt).tenant_id).toBe(service.tenant.tenant_id);

    const hits = await client.recall({ q: 'invoices monday', client: 'acme', limit: 5 });
    expect(searchResultsSchema.parse(hits).map((h) => h.id)).toEqual([receipt.id]);
    expect(hits[0]).toMatchObject({ title: 'Invoices go out on the first Monday', metadata: { source: 'sdk' }, client: 'acme' });

    const suggestion = await client.classify({ title: 'We decided to ship on Fridays', body: 'Agreed in the weekly review.' });
    expect(suggestionSchema.parse(suggestion).type).toBe('decision');
  });

  test('recall takes until: records created before it, exclusive, and with since a range', async () => {
    const first = await client.remember(note('Lighthouse keeper rota, first draft'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await client.remember(note('Lighthouse keeper rota, final'));
    const found = async (query: { since?: string; until?: string }) => (await client.recall({ q: 'lighthouse rota', ...query })).map((h) => h.id);
    expect(await found({ until: second.created_at })).toEqual([first.id]);
    expect(await found({ since: first.created_at, until: first.created_at })).toEqual([]);
    expect((await found({ since: first.created_at, until: new Date(Date.parse(second.created_at) + 1).toISOString() })).sort()).toEqual([first.id, second.id].sort());
    await expect(client.recall({ until: 'soon' })).rejects.toMatchObject({ status: 400, code: 'invalid_until' });
  });

  test('recall takes min_rank: the hits ranked below it are left out, a tiny one as the exponent String() writes', async () => {
    const strong = await client.remember(note('Quarry blasting schedule for spring'));
    const weak = await client.remember({ ...note('Weekly notes'), body: 'Parking, catering, a quarry visit someday, and the review.' });
    const all = await client.recall({ q: 'quarry blasting schedule', agent_id: 'sdk-test' });
    expect(all.map((h) => h.id)).toEqual([strong.id, weak.id]);
    expect((await client.recall({ q: 'quarry blasting schedule', agent_id: 'sdk-test', min_rank: all[0]!.rank })).map((h) => h.id)).toEqual([strong.id]);
    expect(await client.recall({ q: 'quarry blasting schedule', min_rank: 1 })).toEqual([]);
    expect(String(1e-7)).toBe('1e-7');
    expect(await client.recall({ q: 'quarry blasting schedule', agent_id: 'sdk-test', min_rank: 1e-7 })).toHaveLength(2);
    await expect(client.recall({ q: 'quarry', min_rank: 2 })).rejects.toMatchObject({ status: 400, code: 'invalid_min_rank' });
  });

  test('the record types it exports are the API\'s', () => {
    expect(RECORD_TYPES).toEqual(API_RECORD_TYPES);
  });

  test('errors are typed: the API code, the status and the message', async () => {
    const bad = client.remember({ ...note('x'), type: 'memo' as never });
    await expect(bad).rejects.toBeInstanceOf(MemoryApiError);
    await expect(bad).rejects.toMatchObject({ status: 400, code: 'invalid_type', message: expect.stringContaining('fact') });

    const stranger = new MemoryClient({ baseUrl: service.url, apiKey: 'mem_not_a_key' });
    await expect(stranger.recall()).rejects.toMatchObject({ name: 'MemoryApiError', status: 401, code: 'unauthorized' });
  });

  test('429 rate_limited is retried after retry_after, and the call succeeds', async () => {
    const tenant = await service.newTenant({ rate: 1, burst: 1 });
    const { statuses, fetch } = countingFetch();
    const limited = new MemoryClient({ baseUrl: service.url, apiKey: tenant.api_key, fetch });
    await limited.recall();
    const started = Date.now();
    await expect(limited.recall()).resolves.toEqual([]);
    expect(statuses).toEqual([200, 429, 200]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900); // retry_after is 1 s at 1 request a second
  });

  test.each(['overloaded', 'search_timeout'])('503 %s is retried after retry_after, like a 429', async (code) => {
    const statuses: number[] = [];
    let busy = true;
    const once: typeof fetch = async (input, init) => {
      if (busy) {
        busy = false;
        statuses.push(503);
        const body = { error: code, message: 'busy', retry_after: 1 };
        return new Response(JSON.stringify(body), { status: 503, headers: { 'Content-Type': 'application/json', 'Retry-After': '1' } });
      }
      const response = await fetch(input, init);
      statuses.push(response.status);
      return response;
    };
    const started = Date.now();
    await expect(new MemoryClient({ baseUrl: service.url, apiKey: service.tenant.api_key, fetch: once }).recall({ q: 'anything' })).resolves.toEqual(expect.any(Array));
    expect(statuses).toEqual([503, 200]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  test('the retries are bounded: no retries, or a retry_after over the ceiling, throw the 429', async () => {
    const tenant = await service.newTenant({ rate: 0.01, burst: 1 });
    await new MemoryClient({ baseUrl: service.url, apiKey: tenant.api_key }).recall();
    for (const options of [{ maxRetries: 0 }, { maxRetryDelayMs: 5_000 }]) {
      const { statuses, fetch } = countingFetch();
      const limited = new MemoryClient({ baseUrl: service.url, apiKey: tenant.api_key, fetch, ...options });
      const error = await limited.recall().catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfter: 100 });
      expect(statuses).toEqual([429]);
    }
  });

  test('a used-up query quota is thrown at once, not retried: waiting would not help', async () => {
    const tenant = await service.newTenant({ queryQuota: 1 });
    const { statuses, fetch } = countingFetch();
    const quota = new MemoryClient({ baseUrl: service.url, apiKey: tenant.api_key, fetch });
    await quota.recall();
    await expect(quota.recall()).rejects.toMatchObject({ status: 429, code: 'query_quota_exceeded' });
    expect(statuses).toEqual([200, 429]);
  });

  test('a write whose answer is lost is retried with the same idempotency key and stored once', async () => {
    const tenant = await service.newTenant();
    const sent: (string | null)[] = [];
    let lose = true;
    const flaky: typeof fetch = async (input, init) => {
      sent.push(new Headers(init?.headers).get('Idempotency-Key'));
      const response = await fetch(input, init); // the server does the write…
      if (lose) {
        lose = false;
        throw new TypeError('fetch failed'); // …and the answer never arrives
      }
      return response;
    };
    const sdk = new MemoryClient({ baseUrl: service.url, apiKey: tenant.api_key, fetch: flaky });
    const receipt = await sdk.remember(note('Exactly once, despite the retry'));
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent[1]).toBe(sent[0]);
    const hits = await service.client(tenant.api_key).recall({ q: 'exactly once retry' });
    expect(hits.body.map((h: { id: string }) => h.id)).toEqual([receipt.id]);
  });

  test('each remember call has its own key by default, and an explicit key makes two calls one record', async () => {
    const tenant = await service.newTenant();
    const sdk = new MemoryClient({ baseUrl: service.url, apiKey: tenant.api_key });
    const [a, b] = [await sdk.remember(note('Twice on purpose')), await sdk.remember(note('Twice on purpose'))];
    expect(a.id).not.toBe(b.id);
    const [c, d] = [await sdk.remember(note('Once on purpose'), { idempotencyKey: 'k-1' }), await sdk.remember(note('Once on purpose'), { idempotencyKey: 'k-1' })];
    expect(d).toEqual(c);
    await expect(sdk.remember(note('Another record'), { idempotencyKey: 'k-1' })).rejects.toMatchObject({ status: 422, code: 'idempotency_key_reused' });
  });

  test("usage answers the tenant's month: what was written and searched, against its quotas; it counts nothing", async () => {
    const tenant = await service.newTenant({ recordQuota: 50, queryQuota: 40, rate: 500, burst: 700 });
    const sdk = new MemoryClient({ baseUrl: service.url, apiKey: tenant.api_key });
    const monthNow = () => new Date().toISOString().slice(0, 7);
    const before = monthNow();
    const empty = await sdk.usage();
    expect([before, monthNow()]).toContain(empty.month); // the current UTC month
    expect(usageSchema.parse(empty)).toEqual({
      tenant_id: tenant.tenant_id,
      month: empty.month,
      records: { used: 0, quota: 50, remaining: 50 },
      queries: { used: 0, quota: 40, remaining: 40 },
      rate_limit: { rate: 500, burst: 700 },
    });
    expect(await sdk.usage({ include: 'key' })).toEqual({ ...empty, key: { scopes: ['read', 'write', 'delete'], agent_id: null, expires_at: null } });

    for (const title of ['Usage note one', 'Usage note two', 'Usage note three']) await sdk.remember(note(title));
    await sdk.recall({ q: 'usage note' });
    await sdk.recall();
    const expected = { ...empty, records: { used: 3, quota: 50, remaining: 47 }, queries: { used: 2, quota: 40, remaining: 38 } };
    expect(await sdk.usage()).toEqual(expected);
    // Reading it again counts against neither quota.
    expect(await sdk.usage()).toEqual(expected);

    const stranger = new MemoryClient({ baseUrl: service.url, apiKey: 'mem_not_a_key' });
    await expect(stranger.usage()).rejects.toMatchObject({ name: 'MemoryApiError', status: 401, code: 'unauthorized' });
  });

  test('usage still answers when a quota is used up, with remaining 0', async () => {
    const tenant = await service.newTenant({ queryQuota: 1 });
    const sdk = new MemoryClient({ baseUrl: service.url, apiKey: tenant.api_key });
    await sdk.recall();
    await expect(sdk.recall()).rejects.toMatchObject({ status: 429, code: 'query_quota_exceeded' });
    expect((await sdk.usage()).queries).toEqual({ used: 1, quota: 1, remaining: 0 });
  });

  test('usage is a safe read: a failed connection is retried', async () => {
    let attempts = 0;
    const flaky: typeof fetch = async (input, init) => {
      if (attempts++ === 0) throw new TypeError('fetch failed'); // whether or not it was sent, a read may be repeated
      return fetch(input, init);
    };
    const sdk = new MemoryClient({ baseUrl: service.url, apiKey: service.tenant.api_key, fetch: flaky });
    await expect(sdk.usage()).resolves.toMatchObject({ tenant_id: service.tenant.tenant_id });
    expect(attempts).toBe(2);
  });

  test('an unreachable service is retried with backoff, then a MemoryConnectionError', async () => {
    const url = `http://127.0.0.1:${await freePort()}`; // nothing listens there
    const { statuses, fetch } = countingFetch();
    const attempts: number[] = [];
    const sdk = new MemoryClient({
      baseUrl: url,
      apiKey: 'mem_x',
      maxRetries: 2,
      fetch: (input, init) => (attempts.push(Date.now()), fetch(input, init)),
    });
    const error = await sdk.recall().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MemoryConnectionError);
    expect((error as Error).message).toMatch(/fetch failed: ECONNREFUSED$/);
    expect(attempts).toHaveLength(3);
    expect(statuses).toEqual([]);
  });
});

describe('a kept connection that the service closes just as it is used again', () => {
  /** A moment for fetch to put the connection of the last answer back in its pool. */
  const idle = () => new Promise((resolve) => setTimeout(resolve, 20));

  /** Answers the first request of each connection as kept alive, then closes it as the next one arrives. */
  async function closingService(answer: string) {
    const seen: string[] = [];
    const dropped: string[] = [];
    const sockets = new Set<Socket>();
    const server = createTcpServer((socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      let answered = false;
      socket.on('data', (chunk) => {
        const line = chunk.toString().split('\r\n')[0]!;
        if (answered) {
          dropped.push(line);
          socket.destroy();
          return;
        }
        answered = true;
        seen.push(line);
        socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: keep-alive\r\nContent-Length: ${Buffer.byteLength(answer)}\r\n\r\n${answer}`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      seen,
      dropped,
      close: () => {
        for (const socket of sockets) socket.destroy();
        return new Promise((resolve) => server.close(resolve));
      },
    };
  }

  test('a read or a remember goes out once more on a new connection, even with no retries', async () => {
    const service = await closingService(JSON.stringify({ id: 'r1', created_at: '2026-11-25T00:00:00.000Z', tenant_id: 't' }));
    try {
      const sdk = new MemoryClient({ baseUrl: service.url, apiKey: 'mem_x', maxRetries: 0 });
      await sdk.get('r1');
      await idle();
      await sdk.remember({ agent_id: 'a', type: 'fact', title: 't', body: 'b' });
      await idle();
      await sdk.get('r1');
      expect(service.seen.map((line) => line.split(' ')[0])).toEqual(['GET', 'POST', 'GET']);
      expect(service.dropped.map((line) => line.split(' ')[0])).toEqual(['POST', 'GET']);
    } finally {
      await service.close();
    }
  });

  test('a delete is not sent again: it fails with MemoryConnectionError', async () => {
    const service = await closingService(JSON.stringify({ id: 'r1', deleted_at: '2026-11-25T00:00:00.000Z' }));
    try {
      const sdk = new MemoryClient({ baseUrl: service.url, apiKey: 'mem_x' });
      await sdk.delete('r1');
      await idle();
      await expect(sdk.delete('r2')).rejects.toBeInstanceOf(MemoryConnectionError);
      expect(service.seen.map((line) => line.split(' ')[0])).toEqual(['DELETE']);
      expect(service.dropped).toEqual([expect.stringMatching(/^DELETE \/api\/v1\/record\/r2 /)]);
    } finally {
      await service.close();
    }
  });
});

describe('SDK timeouts and cancellation', () => {
  let silent: { server: Server; url: string };
  beforeAll(async () => {
    silent = await listen(() => undefined); // accepts every request and never answers
  });
  afterAll(async () => {
    silent.server.closeAllConnections();
    await new Promise((resolve) => silent.server.close(resolve));
  });

  test('an attempt that gets no answer within timeoutMs fails with MemoryTimeoutError and is not retried', async () => {
    let attempts = 0;
    const sdk = new MemoryClient({ baseUrl: silent.url, apiKey: 'mem_x', timeoutMs: 200, fetch: (i, o) => (attempts++, fetch(i, o)) });
    const started = Date.now();
    await expect(sdk.classify({ title: 't', body: 'b' })).rejects.toBeInstanceOf(MemoryTimeoutError);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(attempts).toBe(1);
  });

  test("the caller's AbortSignal cancels the call with its own reason", async () => {
    const sdk = new MemoryClient({ baseUrl: silent.url, apiKey: 'mem_x' });
    const controller = new AbortController();
    const call = sdk.recall({}, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('the user gave up')), 50);
    await expect(call).rejects.toThrow('the user gave up');
  });
});

describe('the SDK as a package', () => {
  let service: TestService;
  const outDir = mkdtempSync(join(tmpdir(), 'memory-sdk-build-'));
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => {
    await service.stop();
    rmSync(outDir, { recursive: true, force: true });
  });

  test('builds with its own tsconfig (DOM and ES2022 only, no Node types) and runs as plain JavaScript in a fresh node', async () => {
    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'sdk/tsconfig.json'), '--outDir', outDir]);
    const script = `
      const { MemoryClient } = await import(${JSON.stringify(join(outDir, 'index.js'))});
      const client = new MemoryClient({ baseUrl: process.env.URL, apiKey: process.env.KEY });
      const receipt = await client.remember({ agent_id: 'built', type: 'signal', title: 'Built SDK check', body: 'From dist.' });
      const hits = await client.recall({ q: 'built sdk check' });
      console.log(JSON.stringify({ id: receipt.id, found: hits.map((h) => h.id) }));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH ?? '', URL: service.url, KEY: service.tenant.api_key },
    });
    const { id, found } = JSON.parse(stdout) as { id: string; found: string[] };
    expect(found).toEqual([id]);
  });
});

/** An HTTP server on an ephemeral port with the given request handler. */
async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
