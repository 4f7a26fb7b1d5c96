import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { programCommand, ROOT, waitFor } from '../support/child-server.js';
import { clientEnv, startApi, textOf, type RunningApi } from './helpers.js';

/** The MCP server over Streamable HTTP (`npm run mcp -- --http`), as a child process, with the official client. */

let api: RunningApi;
let mcp: ChildProcess;
let stderr = '';
let endpoint: string;
let closed: Promise<number | null>;

beforeAll(async () => {
  api = await startApi();
  const { command, args } = programCommand('mcp');
  mcp = spawn(command, [...args, '--http', '--port', '0'], {
    cwd: ROOT,
    env: clientEnv({ MEMORY_API_URL: api.url, MEMORY_API_KEY: api.key }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  mcp.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  closed = new Promise((resolve) => mcp.once('close', (code) => resolve(code)));
  await waitFor(() => /listening on (http:\/\/\S+)/.test(stderr) || mcp.exitCode !== null, 15_000, 'the MCP server to listen');
  const found = /memory MCP server listening on (http:\/\/\S+) \(memory API (\S+)\)/.exec(stderr);
  if (!found) throw new Error(`the MCP server did not start: ${stderr}`);
  endpoint = found[1]!;
  expect(found[2]).toBe(api.url);
});

afterAll(async () => {
  if (mcp && mcp.exitCode === null) mcp.kill('SIGKILL');
  await api?.stop();
});

describe('the MCP server over Streamable HTTP', () => {
  test('serves /mcp on 127.0.0.1 by default', () => {
    expect(endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  test('an MCP client lists the tools, remembers a record, recalls, lists and reads it, dry-runs its forget and reads the usage', async () => {
    const client = new Client({ name: 'memory-http-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['memory_classify', 'memory_forget', 'memory_get', 'memory_list', 'memory_recall', 'memory_remember', 'memory_update', 'memory_usage']);

      const record = { agent_id: 'http-agent', type: 'decision', title: 'We chose Quillfeather for the billing exports', body: 'Cheaper than the others.' };
      const remembered = await client.callTool({ name: 'memory_remember', arguments: record });
      expect(remembered.isError).toBeFalsy();
      const { id } = remembered.structuredContent as { id: string };

      const recalled = await client.callTool({ name: 'memory_recall', arguments: { q: 'quillfeather billing' } });
      expect(recalled.isError).toBeFalsy();
      expect((recalled.structuredContent as { results: unknown[] }).results).toEqual([expect.objectContaining({ ...record, id })]);
      expect(textOf(recalled)).toContain(`1. ${record.title}`);

      const listed = await client.callTool({ name: 'memory_list', arguments: { agent_id: 'http-agent' } });
      expect(listed.structuredContent).toEqual({ records: [expect.objectContaining({ ...record, id })], next_cursor: null });
      const got = await client.callTool({ name: 'memory_get', arguments: { id } });
      expect(got.structuredContent).toMatchObject({ ...record, id });
      const dry = await client.callTool({ name: 'memory_forget', arguments: { agent_id: 'http-agent' } });
      expect(dry.structuredContent).toMatchObject({ dry_run: true, matched: 1 });
      const usage = await client.callTool({ name: 'memory_usage', arguments: {} });
      expect(usage.structuredContent).toMatchObject({ records: { used: expect.any(Number) }, queries: { used: expect.any(Number) } });
      expect(textOf(usage)).toMatch(/\nRecords: \d+ of \d+ used this month \(\d+ left\)\./);
    } finally {
      await client.close();
    }
  });

  test('it is stateless: GET and DELETE answer 405, another path 404', async () => {
    const get = await fetch(endpoint, { headers: { Accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect((await fetch(endpoint, { method: 'DELETE' })).status).toBe(405);
    expect((await fetch(new URL('/other', endpoint))).status).toBe(404);
  });

  test('a request whose Host is not a loopback name is refused (DNS rebinding)', async () => {
    // fetch will not send a forged Host header, so speak HTTP directly.
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(endpoint, { method: 'POST', headers: { Host: 'attacker.example', 'Content-Type': 'application/json' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    });
    expect(status).toBe(403);
  });

  test('SIGTERM stops it with exit code 0, and nothing went wrong on the way', async () => {
    mcp.kill('SIGTERM');
    expect(await closed).toBe(0);
    expect(stderr).toBe(`memory MCP server listening on ${endpoint} (memory API ${api.url})\n`);
  });
});
