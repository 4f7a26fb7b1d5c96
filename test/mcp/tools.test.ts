import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { freePort } from '../../local/free-port.js';
import { MemoryClient } from '../../sdk/src/index.js';
import { BODY_PREVIEW_CHARS, ERROR_META_KEY } from '../../mcp/format.js';
import { createMemoryMcpServer } from '../../mcp/tools.js';
import { aRecord, startTestService, type TestService } from '../support/local-service.js';
import { textOf } from './helpers.js';

/**
 * The tools in process, through the official client over the SDK's in-memory transport, against the real
 * local service: what the text says in the cases the process tests do not reach, and how each kind of
 * failure reads.
 */

let service: TestService;
const clients: Client[] = [];

/** An MCP client of a server whose tools use `memory`. */
async function connect(memory: MemoryClient, apiUrl: string): Promise<Client> {
  const server = createMemoryMcpServer(memory, { apiUrl });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'memory-tools-test', version: '1.0.0' });
  await client.connect(clientSide);
  clients.push(client);
  return client;
}

const connectTo = (apiKey: string, options: { maxRetries?: number; timeoutMs?: number } = {}) =>
  connect(new MemoryClient({ baseUrl: service.url, apiKey, ...options }), service.url);

beforeAll(async () => {
  service = await startTestService();
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await service?.stop();
});

describe('what memory_recall says', () => {
  let mcp: Client;

  beforeAll(async () => {
    mcp = await connectTo(service.tenant.api_key);
  });

  test('a long body is cut in the text, and says so; the structured result has all of it', async () => {
    const body = `${'word '.repeat(1000)}THE-END`;
    await mcp.callTool({ name: 'memory_remember', arguments: aRecord({ title: 'A very long report on Grimsby', body }) });
    const result = await mcp.callTool({ name: 'memory_recall', arguments: { q: 'grimsby' } });
    const text = textOf(result);
    expect(text).toContain(`${body.slice(0, BODY_PREVIEW_CHARS)}… [cut: ${body.length - BODY_PREVIEW_CHARS} more characters not shown]`);
    expect(text).not.toContain('THE-END');
    expect((result.structuredContent as { results: { body: string }[] }).results[0]!.body).toBe(body);
  });

  test('without q the newest records come first, and the text gives no rank', async () => {
    await mcp.callTool({ name: 'memory_remember', arguments: aRecord({ title: 'The newest note', client: 'acme' }) });
    const text = textOf(await mcp.callTool({ name: 'memory_recall', arguments: { limit: 2 } }));
    expect(text).toMatch(/^2 records \(limit=2; newest first\):\n\n1\. The newest note\n {3}type: fact \| created: \S+ \| agent: agent-1 \| client: acme \| id: \S+\n/);
    expect(text).not.toContain('rank:');
  });

  test('when nothing matches it says so, and what to try', async () => {
    const result = await mcp.callTool({ name: 'memory_recall', arguments: { q: 'xylophone', type: 'signal' } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ results: [] });
    expect(textOf(result)).toBe(
      'No records found (q="xylophone", type="signal"). Try other or fewer words, fewer filters, or no q to see the newest records.',
    );
  });
});

describe('how a failure reads', () => {
  test('a wrong API key: unauthorized', async () => {
    const mcp = await connectTo('mem_not-a-key');
    const result = await mcp.callTool({ name: 'memory_recall', arguments: { q: 'anything' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^unauthorized: \S/);
    expect(result._meta?.[ERROR_META_KEY]).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });

  test('a rate limit that asks for a longer wait than the SDK waits: rate_limited, with the wait', async () => {
    const tenant = await service.newTenant({ rate: 0.001, burst: 1 }, 'slow');
    const mcp = await connectTo(tenant.api_key);
    await mcp.callTool({ name: 'memory_recall', arguments: {} });
    const result = await mcp.callTool({ name: 'memory_recall', arguments: {} });
    expect(result.isError).toBe(true);
    const error = result._meta?.[ERROR_META_KEY] as { retry_after: number };
    expect(error).toEqual({ error: 'rate_limited', message: expect.any(String), retry_after: expect.any(Number) });
    expect(textOf(result)).toMatch(new RegExp(`^rate_limited: .* \\(retry after ${error.retry_after} s\\)$`));
  });

  test('nothing listening at MEMORY_API_URL: connection_failed, naming the URL', async () => {
    const closed = await freePort();
    const url = `http://127.0.0.1:${closed}`;
    const mcp = await connect(new MemoryClient({ baseUrl: url, apiKey: 'mem_x', maxRetries: 0 }), url);
    const result = await mcp.callTool({ name: 'memory_remember', arguments: aRecord() });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(new RegExp(`^connection_failed: could not reach the memory API at ${url} \\(.*ECONNREFUSED\\)\\. Is it running`));
  });

  test('an API that does not answer: timeout', async () => {
    const silent = await listen(createServer(() => undefined));
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const mcp = await connect(new MemoryClient({ baseUrl: url, apiKey: 'mem_x', timeoutMs: 200, maxRetries: 0 }), url);
      const result = await mcp.callTool({ name: 'memory_classify', arguments: { title: 't', body: 'b' } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(new RegExp(`^timeout: the memory API at ${url} did not answer in time`));
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

function listen(server: Server): Promise<Server> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

