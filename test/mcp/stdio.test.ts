import { spawn } from 'node:child_process';
import { SUGGESTED_MIN_RANK } from '../../shared/domain/rank.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { RECORD_TYPES } from '../../shared/domain/record.js';
import { RECORD_TYPE_DESCRIPTIONS } from '../../shared/domain/schemas.js';
import { MCP_HELP } from '../../mcp/config.js';
import { ERROR_META_KEY } from '../../mcp/format.js';
import { killAll, programCommand, removeDir, ROOT, runProgram, tempDir } from '../support/child-server.js';
import { clientEnv, startApi, textOf, type RunningApi } from './helpers.js';

/**
 * The MCP server as an MCP client runs it: a child process over stdio, started by the official SDK's
 * client, against the local server running as another child process.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The record the tests store and recall. */
const record = {
  agent_id: 'support-bot',
  type: 'fact',
  title: 'The user prefers the Zephyrine colour theme in dark mode',
  body: 'Switched it on in the settings page on Monday.\nAsked us to keep it on every device.',
  client: 'acme',
  metadata: { source: 'chat' },
};

let api: RunningApi;
let client: Client;
let stderr = '';
/** Anything the client could not read as protocol: a line of stdout that is not JSON-RPC lands here. */
const clientErrors: Error[] = [];

beforeAll(async () => {
  api = await startApi();
  const transport = new StdioClientTransport({
    ...programCommand('mcp'),
    cwd: ROOT,
    env: clientEnv({ MEMORY_API_URL: api.url, MEMORY_API_KEY: api.key }),
    stderr: 'pipe',
  });
  transport.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  client = new Client({ name: 'memory-test', version: '1.0.0' });
  client.onerror = (error) => clientErrors.push(error);
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close();
  killAll();
  await api?.stop();
});

describe('the MCP server over stdio', () => {
  test('lists eight tools whose arguments carry the API schemas: descriptions, the six types and the limits', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['memory_classify', 'memory_forget', 'memory_get', 'memory_list', 'memory_recall', 'memory_remember', 'memory_update', 'memory_usage']);
    for (const { name } of tools) expect(MCP_HELP).toContain(name); // --help names them all
    const tool = (name: string) => tools.find((t) => t.name === name)!;

    const remember = tool('memory_remember');
    const props = remember.inputSchema.properties as Record<string, any>;
    expect(remember.inputSchema).toMatchObject({ type: 'object', additionalProperties: false, required: ['agent_id', 'type', 'title', 'body'] });
    expect(Object.keys(props)).toEqual(['agent_id', 'type', 'title', 'body', 'client', 'metadata', 'supersedes', 'idempotency_key']);
    expect(props.supersedes).toMatchObject({ type: 'array', maxItems: 20, items: { type: 'string' } });
    expect(remember.description).toContain('supersedes');
    expect(props.type.enum).toEqual([...RECORD_TYPES]);
    for (const type of RECORD_TYPES) {
      expect(props.type.description).toContain(`${type}: ${RECORD_TYPE_DESCRIPTIONS[type]}`);
      expect(remember.description).toContain(`${type}: ${RECORD_TYPE_DESCRIPTIONS[type]}`);
    }
    expect(props.title).toMatchObject({ type: 'string', minLength: 1, maxLength: 2048 });
    expect(props.title.description).toContain('main search signal');
    expect(remember.description).toContain('main search signal');
    expect(props.agent_id).toMatchObject({ maxLength: 256, description: expect.stringContaining('Which agent') });
    expect(props.body.description).toContain('65536 bytes');
    expect(props.idempotency_key).toMatchObject({ type: 'string', maxLength: 255 });
    expect(remember.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    expect(remember.outputSchema).toMatchObject({ type: 'object', required: ['id', 'created_at', 'tenant_id'] });

    const recall = tool('memory_recall');
    const recallProps = recall.inputSchema.properties as Record<string, any>;
    expect(Object.keys(recallProps).sort()).toEqual(['agent_id', 'client', 'include_superseded', 'limit', 'min_rank', 'q', 'since', 'type', 'until']);
    // The tool's default is the suggested cut-off, and its description says so and how to search.
    expect(recallProps.min_rank).toMatchObject({ type: 'number', minimum: 0, maximum: 1 });
    expect(recallProps.min_rank.description).toContain(`Default ${SUGGESTED_MIN_RANK}`);
    expect(recall.description).toContain('Search with the words the memory itself would contain');
    expect(recall.description).toContain('nothing relevant was found');
    expect(recallProps.include_superseded).toMatchObject({ type: 'boolean' });
    expect(recallProps.until.description).toContain('(exclusive)');
    expect(recall.inputSchema.required ?? []).toEqual([]);
    expect(recallProps.limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
    expect(recallProps.q.description).toContain('never a query language');
    expect(recallProps.type.enum).toEqual([...RECORD_TYPES]);
    expect(recall.annotations).toMatchObject({ readOnlyHint: true });
    expect(recall.outputSchema).toMatchObject({ type: 'object', required: ['results'] });

    const classify = tool('memory_classify');
    expect(Object.keys(classify.inputSchema.properties!)).toEqual(['title', 'body']);
    expect(classify.annotations).toMatchObject({ readOnlyHint: true });

    const get = tool('memory_get');
    expect(get.inputSchema).toMatchObject({ type: 'object', additionalProperties: false, required: ['id'] });
    expect(get.annotations).toMatchObject({ readOnlyHint: true });
    expect(get.outputSchema).toMatchObject({ type: 'object', required: expect.arrayContaining(['id', 'body', 'classification']) });

    const update = tool('memory_update');
    const updateProps = update.inputSchema.properties as Record<string, any>;
    expect(update.inputSchema).toMatchObject({ type: 'object', additionalProperties: false, required: ['id'] });
    expect(Object.keys(updateProps)).toEqual(['id', 'title', 'body', 'type', 'client', 'metadata', 'if_version']);
    expect(updateProps.if_version).toMatchObject({ type: 'integer', minimum: 1 });
    expect(updateProps.type.enum).toEqual([...RECORD_TYPES]);
    // When to update and when to supersede, in both tools' descriptions.
    for (const described of [update.description, remember.description]) {
      expect(described).toContain('"User switched to light mode" supersedes "User prefers dark mode"');
      expect(described).toMatch(/typo, a wrong value/);
    }
    expect(update.annotations).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false });
    expect(update.outputSchema).toMatchObject({ type: 'object', required: expect.arrayContaining(['id', 'version', 'updated_at', 'superseded_by']) });

    const list = tool('memory_list');
    const listProps = list.inputSchema.properties as Record<string, any>;
    expect(Object.keys(listProps)).toEqual(['agent_id', 'type', 'client', 'since', 'until', 'include_superseded', 'order', 'limit', 'cursor']);
    expect(list.inputSchema.required ?? []).toEqual([]);
    expect(listProps.limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
    expect(listProps.order.enum).toEqual(['desc', 'asc']);
    expect(listProps.cursor.description).toContain('invalid_cursor');
    expect(list.annotations).toMatchObject({ readOnlyHint: true });
    expect(list.outputSchema).toMatchObject({ type: 'object', required: ['records', 'next_cursor'] });

    const forget = tool('memory_forget');
    const forgetProps = forget.inputSchema.properties as Record<string, any>;
    expect(Object.keys(forgetProps)).toEqual(['agent_id', 'client', 'type', 'before', 'ids', 'confirm']);
    expect(forget.inputSchema.required ?? []).toEqual([]);
    expect(forgetProps.ids).toMatchObject({ type: 'array', minItems: 1, maxItems: 1000 });
    expect(forgetProps.confirm).toMatchObject({ type: 'boolean' });
    expect(forget.description).toContain('dry run');
    expect(forget.annotations).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false });
    expect(forget.outputSchema).toMatchObject({ type: 'object', required: ['dry_run', 'matched'] });

    const usage = tool('memory_usage');
    expect(usage.inputSchema).toMatchObject({ type: 'object', properties: {}, additionalProperties: false });
    expect(usage.description).toContain('counts against neither quota');
    expect(usage.annotations).toEqual({ readOnlyHint: true, openWorldHint: false });
    expect(usage.outputSchema).toMatchObject({ type: 'object', required: ['tenant_id', 'month', 'records', 'queries', 'rate_limit', 'key'] });
    expect((usage.outputSchema!.properties as Record<string, any>).records).toMatchObject({ type: 'object', required: ['used', 'quota', 'remaining'] });
  });

  let stored: { id: string };


  test('memory_remember stores a record and answers its receipt', async () => {
    const result = await client.callTool({ name: 'memory_remember', arguments: record });
    expect(result.isError).toBeFalsy();
    stored = result.structuredContent as { id: string };
    expect(stored).toEqual({ id: expect.stringMatching(UUID), created_at: expect.any(String), tenant_id: expect.any(String) });
    expect(textOf(result)).toContain(stored.id);
    expect(textOf(result)).toContain(record.title);
  });

  test('memory_recall finds it again, as text a model reads and as structured results', async () => {
    const result = await client.callTool({ name: 'memory_recall', arguments: { q: 'zephyrine theme', agent_id: 'support-bot', limit: 5 } });
    expect(result.isError).toBeFalsy();
    const { results } = result.structuredContent as { results: any[] };
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ ...record, id: stored.id });
    expect(results[0].rank).toBeGreaterThan(0);

    const text = textOf(result);
    expect(text).toMatch(new RegExp(`^1 record \\(q="zephyrine theme", agent_id="support-bot", min_rank=${SUGGESTED_MIN_RANK}, limit=5; best match first\\):`));
    expect(text).toContain(`1. ${record.title}`);
    expect(text).toContain(`type: fact | rank: `);
    expect(text).toContain(`agent: support-bot | client: acme | id: ${stored.id}`);
    expect(text).toContain('   Switched it on in the settings page on Monday.\n   Asked us to keep it on every device.');
    expect(text).toContain('metadata: {"source":"chat"}');
  });

  test('memory_classify suggests a type and stores nothing', async () => {
    const result = await client.callTool({
      name: 'memory_classify',
      arguments: { title: 'We decided to move the nightly job to 2am', body: 'Agreed in the ops review.' },
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ type: 'decision', model: expect.any(String) });
    expect(textOf(result)).toMatch(/^Suggested type: decision \(confidence 0\.\d{3}, model \S+\)\.\nScores: decision 0\.\d{3}, /);
    const all = await client.callTool({ name: 'memory_recall', arguments: {} });
    expect((all.structuredContent as { results: unknown[] }).results).toHaveLength(1);
  });

  test('an idempotency_key makes a retry safe; reusing it for another record is a tool error with the API code', async () => {
    const args = { ...record, title: 'The user moved to the Lisbon office', idempotency_key: 'mcp-test-lisbon-1' };
    const first = await client.callTool({ name: 'memory_remember', arguments: args });
    const again = await client.callTool({ name: 'memory_remember', arguments: args });
    expect(again.structuredContent).toEqual(first.structuredContent);

    const reused = await client.callTool({ name: 'memory_remember', arguments: { ...args, title: 'Something else' } });
    expect(reused.isError).toBe(true);
    expect(textOf(reused)).toMatch(/^idempotency_key_reused: \S/);
    expect(reused.structuredContent).toBeUndefined();
    expect(reused._meta?.[ERROR_META_KEY]).toMatchObject({ error: 'idempotency_key_reused', message: expect.any(String) });
  });

  test('an error the API finds in the arguments is a tool error with its code', async () => {
    const result = await client.callTool({ name: 'memory_recall', arguments: { since: 'last tuesday' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('invalid_since: since must be a date (YYYY-MM-DD) or an ISO 8601 date-time, from 0001-01-01 to 9999-12-31 UTC');
  });

  test('arguments the schemas refuse are a tool error before any call: wrong type, blank title, unknown field, limit 0', async () => {
    // The text docs/mcp.md quotes: the MCP SDK's own, with the tool, the problem and the field.
    const refused = (tool: string) => `^MCP error -32602: Input validation error: Invalid arguments for tool ${tool}: `;
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['memory_remember', { ...record, type: 'fiction' }, new RegExp(`${refused('memory_remember')}.*fact.*signal.* at type$`, 's')],
      ['memory_remember', { ...record, title: '   ' }, new RegExp(`${refused('memory_remember')}must not be blank at title$`)],
      ['memory_remember', { ...record, tags: ['x'] }, new RegExp(`${refused('memory_remember')}Unrecognized key.*"tags"`)],
      ['memory_recall', { limit: 0 }, new RegExp(`${refused('memory_recall')}.* at limit$`, 's')],
    ];
    for (const [name, args, message] of cases) {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(message);
    }
    // Nothing was stored by the refused calls.
    const all = await client.callTool({ name: 'memory_recall', arguments: {} });
    expect((all.structuredContent as { results: unknown[] }).results).toHaveLength(2);
  });

  test('memory_list, memory_get and memory_forget: list the records, read one, forget it after a dry run', async () => {
    const extra = { ...record, title: 'A scratch note about the Ostrava trip', client: null, metadata: null };
    const { id } = (await client.callTool({ name: 'memory_remember', arguments: extra })).structuredContent as { id: string };

    const listed = await client.callTool({ name: 'memory_list', arguments: { agent_id: 'support-bot', limit: 1 } });
    expect(listed.isError).toBeFalsy();
    const page = listed.structuredContent as { records: { id: string }[]; next_cursor: string | null };
    expect(page.records.map((r) => r.id)).toEqual([id]);
    expect(page.next_cursor).toEqual(expect.any(String));
    expect(textOf(listed)).toContain(`cursor=${JSON.stringify(page.next_cursor)}`);

    const got = await client.callTool({ name: 'memory_get', arguments: { id } });
    expect(got.structuredContent).toMatchObject({ ...extra, id });

    const dry = await client.callTool({ name: 'memory_forget', arguments: { ids: [id] } });
    expect(dry.structuredContent).toMatchObject({ dry_run: true, matched: 1, deleted: 0, sample: [expect.objectContaining({ id })] });
    expect((await client.callTool({ name: 'memory_get', arguments: { id } })).isError).toBeFalsy();
    const done = await client.callTool({ name: 'memory_forget', arguments: { ids: [id], confirm: true } });
    expect(done.structuredContent).toEqual({ dry_run: false, matched: 1, deleted: 1 });
    const gone = await client.callTool({ name: 'memory_get', arguments: { id } });
    expect(gone.isError).toBe(true);
    expect(textOf(gone)).toMatch(/^not_found: /);
  });

  test('memory_update corrects a record in place; memory_remember with supersedes replaces one, which recall then leaves out', async () => {
    const wrong = { ...record, title: 'The Kestrelworth office opens at 8am', client: null, metadata: null };
    const { id } = (await client.callTool({ name: 'memory_remember', arguments: wrong })).structuredContent as { id: string };
    const updated = await client.callTool({ name: 'memory_update', arguments: { id, title: 'The Kestrelworth office opens at 9am', if_version: 1 } });
    expect(updated.isError).toBeFalsy();
    expect(updated.structuredContent).toMatchObject({ id, title: 'The Kestrelworth office opens at 9am', version: 2, updated_at: expect.any(String) });
    expect(textOf(updated)).toContain(`(record ${id}): title changed. It is now version 2`);
    const got = textOf(await client.callTool({ name: 'memory_get', arguments: { id } }));
    expect(got).toMatch(new RegExp(`\\| id: ${id} \\| version: 2 \\| updated: \\S+\\n`));

    const newer = { ...wrong, title: 'The Kestrelworth office moved to the harbour', supersedes: [id] };
    const replaced = await client.callTool({ name: 'memory_remember', arguments: newer });
    expect(replaced.isError).toBeFalsy();
    expect(textOf(replaced)).toContain(`It supersedes record ${id}`);
    const found = await client.callTool({ name: 'memory_recall', arguments: { q: 'kestrelworth' } });
    expect((found.structuredContent as { results: { title: string }[] }).results.map((r) => r.title)).toEqual([newer.title]);
  });

  test("memory_usage says what is left of the month's quotas, and counts nothing itself", async () => {
    const result = await client.callTool({ name: 'memory_usage', arguments: {} });
    expect(result.isError).toBeFalsy();
    type Allowance = { used: number; quota: number; remaining: number };
    const usage = result.structuredContent as { month: string; records: Allowance; queries: Allowance };
    // The records and searches the tests above made, with the quotas of the first key of `npm start`.
    expect(usage.records.used).toBeGreaterThanOrEqual(2);
    expect(usage.queries.used).toBeGreaterThanOrEqual(3);
    for (const a of [usage.records, usage.queries]) expect(a.remaining).toBe(a.quota - a.used);
    const text = textOf(result);
    expect(text).toContain(`\nRecords: ${usage.records.used} of ${usage.records.quota} used this month (${usage.records.remaining} left).\n`);
    expect(text).toContain(`\nSearches: ${usage.queries.used} of ${usage.queries.quota} used this month (${usage.queries.remaining} left).\n`);
    expect((await client.callTool({ name: 'memory_usage', arguments: {} })).structuredContent).toEqual(usage);
  });

  test('stdout carried nothing but the protocol, and stderr only the start line', () => {
    expect(clientErrors).toEqual([]);
    expect(stderr).toBe(`memory MCP server on stdio (memory API ${api.url})\n`);
  });
});

describe('starting the MCP server', () => {
  test('without MEMORY_API_KEY it says so on stderr, prints nothing on stdout and exits with 1', async () => {
    const result = await runProgram('mcp', [], { MEMORY_API_URL: api.url });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^memory MCP server: MEMORY_API_KEY is not set\. /);
  });

  test('a malformed command line exits with 2', async () => {
    const result = await runProgram('mcp', ['--port', '9000'], { MEMORY_API_KEY: 'mem_x' });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('--port and --host need --http');
  });

  test('the command of docs/mcp.md works from any directory, speaks only JSON-RPC on stdout and ends when stdin closes', async () => {
    // Exactly the Claude Desktop and Cursor entry: npm run --silent --prefix <repo> mcp, with the two
    // settings and the minimal environment an MCP client passes, started outside the repository.
    const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts ?? {};
    if (scripts.mcp === undefined) throw new Error('package.json has no "mcp" script: add "mcp": "node scripts/launch.mjs mcp"');
    const cwd = tempDir('memory-mcp-cwd-');
    const child = spawn('npm', ['run', '--silent', '--prefix', ROOT, 'mcp'], {
      cwd,
      env: { ...getDefaultEnvironment(), MEMORY_API_URL: api.url, MEMORY_API_KEY: api.key },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let childStderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (childStderr += s));
    let exitCode: number | null | undefined;
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve((exitCode = code))));
    const lines = () => stdout.split('\n').filter((l) => l !== '');
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    const answerTo = async (id: number) => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const found = lines().map((l) => JSON.parse(l)).find((m) => m.id === id);
        if (found) return found;
        if (exitCode !== undefined || Date.now() > deadline) {
          throw new Error(`no answer to ${id} (exit code ${exitCode}); stdout: ${stdout}; stderr: ${childStderr}`);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    try {
      send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
      expect((await answerTo(1)).result.serverInfo).toMatchObject({ name: 'agent-memory' });
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'memory_recall', arguments: { q: 'zephyrine' } } });
      const recalled = await answerTo(2);
      expect(recalled.result.structuredContent.results[0].title).toBe(record.title);

      child.stdin.end();
      expect(await exited).toBe(0);
      for (const line of lines()) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
      expect(lines()).toHaveLength(2);
      expect(childStderr).not.toMatch(/error|warn/i);
    } finally {
      child.kill('SIGKILL');
      removeDir(cwd);
    }
  });
});
