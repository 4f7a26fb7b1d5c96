import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { freePort } from '../../local/free-port.js';
import { MemoryClient } from '../../sdk/src/index.js';
import { BODY_PREVIEW_CHARS, ERROR_META_KEY, LIST_BODY_PREVIEW_CHARS } from '../../mcp/format.js';
import { createMemoryMcpServer } from '../../mcp/tools.js';
import { SUGGESTED_MIN_RANK } from '../../shared/domain/rank.js';
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

  test('until keeps the records created before it, and the text names it', async () => {
    const stored = await mcp.callTool({ name: 'memory_remember', arguments: aRecord({ title: 'Quarterly harbour inspection booked' }) });
    const { created_at: at, id } = stored.structuredContent as { created_at: string; id: string };
    const later = new Date(Date.parse(at) + 1).toISOString();
    const found = await mcp.callTool({ name: 'memory_recall', arguments: { q: 'harbour inspection', until: later } });
    expect((found.structuredContent as { results: { id: string }[] }).results.map((r) => r.id)).toEqual([id]);
    const before = await mcp.callTool({ name: 'memory_recall', arguments: { q: 'harbour inspection', since: '2020-01-01', until: at } });
    expect(before.structuredContent).toEqual({ results: [] });
    expect(textOf(before)).toMatch(new RegExp(`^Nothing relevant found \\(q="harbour inspection", since="2020-01-01", until="[^"]+", min_rank=${SUGGESTED_MIN_RANK}\\)`));
    const bad = await mcp.callTool({ name: 'memory_recall', arguments: { until: 'next friday' } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toBe('invalid_until: until must be a date (YYYY-MM-DD) or an ISO 8601 date-time, from 0001-01-01 to 9999-12-31 UTC');
  });

  test('when nothing matches it says so, and what to try', async () => {
    const result = await mcp.callTool({ name: 'memory_recall', arguments: { q: 'xylophone', type: 'signal' } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ results: [] });
    expect(textOf(result)).toBe(
      `Nothing relevant found (q="xylophone", type="signal", min_rank=${SUGGESTED_MIN_RANK}): no record ranks at or above min_rank ${SUGGESTED_MIN_RANK}. ` +
        'The memory holds nothing that matches these words well. If it may be stored in other words, search with the words the record itself would ' +
        'contain; min_rank: 0 shows every weaker match.',
    );
    const unfiltered = await mcp.callTool({ name: 'memory_recall', arguments: { q: 'xylophone', type: 'signal', min_rank: 0 } });
    expect(textOf(unfiltered)).toBe(
      'No records found (q="xylophone", type="signal", min_rank=0). Try other or fewer words, fewer filters, or no q to see the newest records.',
    );
  });

  test('the suggested cut-off applies unless the agent passes min_rank: a weak match is left out, and min_rank: 0 brings it back', async () => {
    const own = await connectTo((await service.newTenant()).api_key);
    const strong = await own.callTool({ name: 'memory_remember', arguments: aRecord({ title: 'Lighthouse keeper rota for the winter', body: 'Agreed with the harbour office.' }) });
    const weak = await own.callTool({
      name: 'memory_remember',
      arguments: aRecord({ title: 'Notes from the planning meeting', body: 'Budget, hiring, the office move, a lighthouse postcard for Sam, parking, catering and the quarterly review.' }),
    });
    for (let i = 0; i < 8; i++) await own.callTool({ name: 'memory_remember', arguments: aRecord({ title: `Unrelated note ${i}`, body: `Filler record number ${i}.` }) });
    const idOf = (r: unknown) => ((r as { structuredContent: unknown }).structuredContent as { id: string }).id;
    const q = 'lighthouse keeper winter rota';
    const every = (await own.callTool({ name: 'memory_recall', arguments: { q, min_rank: 0 } })).structuredContent as { results: { id: string; rank: number }[] };
    expect(every.results.map((r) => r.id)).toEqual([idOf(strong), idOf(weak)]);
    // The weak match shares one word, once, in its body: it ranks below the cut-off, the strong one above.
    expect(every.results[1]!.rank).toBeLessThan(SUGGESTED_MIN_RANK);
    expect(every.results[0]!.rank).toBeGreaterThanOrEqual(SUGGESTED_MIN_RANK);
    const byDefault = await own.callTool({ name: 'memory_recall', arguments: { q } });
    expect((byDefault.structuredContent as { results: { id: string }[] }).results.map((r) => r.id)).toEqual([idOf(strong)]);
    expect(textOf(byDefault)).toContain(`min_rank=${SUGGESTED_MIN_RANK}`);
    const none = await own.callTool({ name: 'memory_recall', arguments: { q: 'postcard zyxwvut qwertyuiop asdfghjkl' } });
    expect(none.structuredContent).toEqual({ results: [] });
    expect(textOf(none)).toMatch(/^Nothing relevant found /);
    const stricter = await own.callTool({ name: 'memory_recall', arguments: { q, min_rank: 0.99 } });
    expect(stricter.structuredContent).toEqual({ results: [] });
    // Without q nothing is ranked, so nothing is cut.
    expect(((await own.callTool({ name: 'memory_recall', arguments: { limit: 100 } })).structuredContent as { results: unknown[] }).results).toHaveLength(10);
  });
});

describe('memory_get, memory_list and memory_forget', () => {
  /** An MCP client of a fresh tenant, so that counts and listings are exact. */
  const fresh = async () => connectTo((await service.newTenant()).api_key);
  const remember = async (mcp: Client, overrides: Record<string, unknown>) => {
    const result = await mcp.callTool({ name: 'memory_remember', arguments: aRecord(overrides) });
    if (result.isError) throw new Error(textOf(result));
    return (result.structuredContent as { id: string; created_at: string }).id;
  };
  const structured = <T>(result: object) => (result as { structuredContent: T }).structuredContent;

  test('memory_get answers one record in full: the body is not cut, the metadata is there', async () => {
    const mcp = await fresh();
    const body = `${'detail '.repeat(600)}THE-END`;
    const id = await remember(mcp, { title: 'The full Harrowgate report', body, client: 'acme', metadata: { pages: 12 } });
    const result = await mcp.callTool({ name: 'memory_get', arguments: { id } });
    expect(result.isError).toBeFalsy();
    expect(structured(result)).toEqual({
      id, agent_id: 'agent-1', type: 'fact', title: 'The full Harrowgate report', body, client: 'acme', metadata: { pages: 12 },
      created_at: expect.any(String), classification: null, version: 1, updated_at: null, superseded_by: null,
    });
    const text = textOf(result);
    expect(text).toMatch(new RegExp(`^The full Harrowgate report\ntype: fact \| created: \S+ \| agent: agent-1 \| client: acme \| id: ${id} \| version: 1\n\n`));
    expect(text).toContain(`${body}\n\nmetadata: {"pages":12}`);
  });

  test('memory_get of an unknown or malformed id is a not_found tool error', async () => {
    const mcp = await fresh();
    for (const id of ['01930000-0000-7000-8000-000000000000', 'nonsense']) {
      const result = await mcp.callTool({ name: 'memory_get', arguments: { id } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^not_found: /);
      expect(result._meta?.[ERROR_META_KEY]).toMatchObject({ error: 'not_found' });
    }
  });

  test('memory_list answers one page and the cursor of the next; following it reaches every record once', async () => {
    const mcp = await fresh();
    const ids: string[] = [];
    for (let i = 1; i <= 5; i++) ids.push(await remember(mcp, { title: `Listed note ${i}`, body: i === 5 ? 'x'.repeat(1000) : `Body ${i}` }));
    await remember(mcp, { agent_id: 'another-agent', title: 'Not listed' });

    const first = await mcp.callTool({ name: 'memory_list', arguments: { agent_id: 'agent-1', limit: 2 } });
    expect(first.isError).toBeFalsy();
    const page = structured<{ records: { id: string }[]; next_cursor: string | null }>(first);
    expect(page.records.map((r) => r.id)).toEqual([ids[4], ids[3]]);
    const text = textOf(first);
    expect(text).toMatch(/^2 records \(agent_id="agent-1", limit=2; newest first\):\n\n1\. Listed note 5\n {3}type: fact \| created: \S+ \| agent: agent-1 \| id: \S+\n/);
    // A listing cuts bodies shorter than a search: it is for finding records; memory_get reads them.
    expect(text).toContain(`${'x'.repeat(LIST_BODY_PREVIEW_CHARS)}… [cut: ${1000 - LIST_BODY_PREVIEW_CHARS} more characters not shown]`);
    expect(text.endsWith(`More records: call memory_list again with the same filters and cursor=${JSON.stringify(page.next_cursor)}`)).toBe(true);

    const seen = page.records.map((r) => r.id);
    let cursor = page.next_cursor;
    let last = '';
    while (cursor !== null) {
      const next = await mcp.callTool({ name: 'memory_list', arguments: { agent_id: 'agent-1', limit: 2, cursor } });
      const nextPage = structured<{ records: { id: string }[]; next_cursor: string | null }>(next);
      seen.push(...nextPage.records.map((r) => r.id));
      cursor = nextPage.next_cursor;
      last = textOf(next);
    }
    expect(seen).toEqual([...ids].reverse());
    expect(last).toMatch(/^1 record more \(agent_id="agent-1", limit=2; newest first\):/);
    expect(last.endsWith('This is the last page.')).toBe(true);

    const oldest = textOf(await mcp.callTool({ name: 'memory_list', arguments: { order: 'asc', limit: 1 } }));
    expect(oldest).toMatch(/^1 record \(order="asc", limit=1; oldest first\):\n\n1\. Listed note 1\n/);
    expect(textOf(await mcp.callTool({ name: 'memory_list', arguments: { type: 'signal' } }))).toBe('No records found (type="signal"). Try fewer filters.');
  });

  test('memory_list with a cursor of other filters is an invalid_cursor tool error; limit above 100 is refused', async () => {
    const mcp = await fresh();
    for (let i = 0; i < 3; i++) await remember(mcp, { title: `Cursor note ${i}` });
    const { next_cursor } = structured<{ next_cursor: string }>(await mcp.callTool({ name: 'memory_list', arguments: { limit: 1 } }));
    const result = await mcp.callTool({ name: 'memory_list', arguments: { type: 'decision', cursor: next_cursor } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^invalid_cursor: cursor was made for other filters/);

    const tooMany = await mcp.callTool({ name: 'memory_list', arguments: { limit: 101 } });
    expect(tooMany.isError).toBe(true);
    expect(textOf(tooMany)).toMatch(/^MCP error -32602: Input validation error: Invalid arguments for tool memory_list: .* at limit$/s);
  });

  test('memory_forget without confirm is a dry run: the count and a sample, nothing deleted; with confirm: true it deletes', async () => {
    const mcp = await fresh();
    const doomed: string[] = [];
    for (let i = 1; i <= 7; i++) doomed.push(await remember(mcp, { agent_id: 'scratch', title: `Scratch note ${i}`, client: i === 1 ? 'acme' : null }));
    const kept = await remember(mcp, { agent_id: 'keeper', title: 'Keep this one' });

    const dry = await mcp.callTool({ name: 'memory_forget', arguments: { agent_id: 'scratch' } });
    expect(dry.isError).toBeFalsy();
    const preview = structured<{ dry_run: boolean; matched: number; deleted: number; sample: { id: string }[] }>(dry);
    expect(preview).toMatchObject({ dry_run: true, matched: 7, deleted: 0 });
    expect(preview.sample.map((r) => r.id)).toEqual(doomed.slice(2).reverse()); // 5, newest first
    const text = textOf(dry);
    expect(text).toMatch(/^Dry run: 7 records match agent_id="scratch" and would be deleted\. Nothing was deleted yet\.\n\nSome of them \(newest first\):\n- Scratch note 7 \| type: fact \| created: \S+ \| agent: scratch \| id: \S+\n/);
    expect(text).toContain('call memory_forget again with the same arguments and confirm: true, once the user has agreed');
    const stillThere = await mcp.callTool({ name: 'memory_get', arguments: { id: doomed[0]! } });
    expect(stillThere.isError).toBeFalsy();

    const done = await mcp.callTool({ name: 'memory_forget', arguments: { agent_id: 'scratch', confirm: true } });
    expect(done.isError).toBeFalsy();
    expect(structured(done)).toEqual({ dry_run: false, matched: 7, deleted: 7 });
    expect(textOf(done)).toBe('Deleted 7 records matching agent_id="scratch".');
    expect((await mcp.callTool({ name: 'memory_get', arguments: { id: doomed[0]! } })).isError).toBe(true);
    expect(structured<{ records: { id: string }[] }>(await mcp.callTool({ name: 'memory_list', arguments: {} })).records.map((r) => r.id)).toEqual([kept]);

    const nothing = await mcp.callTool({ name: 'memory_forget', arguments: { agent_id: 'scratch' } });
    expect(textOf(nothing)).toBe('Nothing to forget: no record matches agent_id="scratch". Nothing was deleted.');
    expect(structured(nothing)).toEqual({ dry_run: true, matched: 0, deleted: 0, sample: [] });
  });

  test('memory_forget by ids shows those records that match, and a dry run with confirm: false deletes nothing', async () => {
    const mcp = await fresh();
    const a = await remember(mcp, { title: 'First of a pair', type: 'decision' });
    const b = await remember(mcp, { title: 'Second of a pair', type: 'fact' });
    const unknown = '01930000-0000-7000-8000-000000000000';
    const dry = await mcp.callTool({ name: 'memory_forget', arguments: { ids: [a, b, unknown], type: 'decision', confirm: false } });
    expect(structured(dry)).toEqual({ dry_run: true, matched: 1, deleted: 0, sample: [expect.objectContaining({ id: a, title: 'First of a pair' })] });
    expect(textOf(dry)).toMatch(new RegExp(`^Dry run: 1 record matches type="decision", ids=\\["${a}","${b}","${unknown}"\\] and would be deleted\\.[^]*\\nThe record:\\n- First of a pair \\| type: decision`));
    const done = await mcp.callTool({ name: 'memory_forget', arguments: { ids: [a, b], type: 'decision', confirm: true } });
    expect(structured(done)).toEqual({ dry_run: false, matched: 1, deleted: 1 });
    expect((await mcp.callTool({ name: 'memory_get', arguments: { id: b } })).isError).toBeFalsy();
  });

  test('memory_forget without a selector is the API\'s missing_field, even with confirm', async () => {
    const mcp = await fresh();
    for (const args of [{}, { confirm: true }]) {
      const result = await mcp.callTool({ name: 'memory_forget', arguments: args });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^missing_field: at least one of agent_id, client, type, before, ids is required/);
    }
  });

  test('a confirmed forget that runs as a job says so, with the job id', async () => {
    // The local server always forgets within the request; the 202 of a large forget on AWS is played here.
    const jobs: typeof fetch = async (input, init) => {
      if (new URL(String(input)).pathname === '/api/v1/forget' && !String(init?.body).includes('"dry_run":true')) {
        return new Response(JSON.stringify({ job_id: 'job-7', matched: 4200 }), { status: 202, headers: { 'Content-Type': 'application/json' } });
      }
      return fetch(input, init);
    };
    const mcp = await connect(new MemoryClient({ baseUrl: service.url, apiKey: service.tenant.api_key, fetch: jobs }), service.url);
    const result = await mcp.callTool({ name: 'memory_forget', arguments: { client: 'bulk', confirm: true } });
    expect(result.isError).toBeFalsy();
    expect(structured(result)).toEqual({ dry_run: false, matched: 4200, job_id: 'job-7' });
    expect(textOf(result)).toBe(
      'Forgetting 4200 records matching client="bulk": they are hidden from every read from now on, and deleted in the background (job job-7).',
    );
  });
});

describe('memory_usage', () => {
  test("answers the month's use against the quotas, in plain words and as the API's answer; it counts nothing", async () => {
    const tenant = await service.newTenant({ recordQuota: 100, queryQuota: 50, rate: 20, burst: 40 });
    const mcp = await connectTo(tenant.api_key);
    for (const title of ['Usage one', 'Usage two', 'Usage three']) {
      expect((await mcp.callTool({ name: 'memory_remember', arguments: aRecord({ title }) })).isError).toBeFalsy();
    }
    await mcp.callTool({ name: 'memory_recall', arguments: { q: 'usage' } });
    await mcp.callTool({ name: 'memory_list', arguments: {} }); // a listing is not a search: it counts nothing

    const result = await mcp.callTool({ name: 'memory_usage', arguments: {} });
    expect(result.isError).toBeFalsy();
    const usage = result.structuredContent as { month: string };
    expect(usage).toEqual({
      tenant_id: tenant.tenant_id,
      month: expect.stringMatching(/^\d{4}-\d{2}$/),
      records: { used: 3, quota: 100, remaining: 97 },
      queries: { used: 1, quota: 50, remaining: 49 },
      rate_limit: { rate: 20, burst: 40 },
      key: { scopes: ['read', 'write', 'delete'], agent_id: null, expires_at: null },
    });
    expect(textOf(result)).toBe(
      `Usage of ${usage.month} (UTC month) for tenant ${tenant.tenant_id}:\n` +
        'Records: 3 of 100 used this month (97 left).\n' +
        'Searches: 1 of 50 used this month (49 left).\n' +
        'Rate limit: 20 requests a second, bursts of up to 40.',
    );
    // Asked again, without arguments at all: the same answer, since it counts against neither quota.
    expect((await mcp.callTool({ name: 'memory_usage' })).structuredContent).toEqual(result.structuredContent);
  });

  test('a used-up quota reads as none left, with what it refuses', async () => {
    const tenant = await service.newTenant({ queryQuota: 1 });
    const mcp = await connectTo(tenant.api_key);
    await mcp.callTool({ name: 'memory_recall', arguments: {} });
    const refused = await mcp.callTool({ name: 'memory_recall', arguments: {} });
    expect(textOf(refused)).toMatch(/^query_quota_exceeded: /);
    const text = textOf(await mcp.callTool({ name: 'memory_usage', arguments: {} }));
    expect(text).toContain('\nSearches: 1 of 1 used this month (none left: memory_recall is refused with query_quota_exceeded until the month ends).\n');
    expect(text).toMatch(/\nRecords: 0 of \d+ used this month \(\d+ left\)\.\n/);
  });

  test('an argument is refused by the schema; a wrong key is unauthorized', async () => {
    const extra = await (await connectTo(service.tenant.api_key)).callTool({ name: 'memory_usage', arguments: { month: '2026-01' } });
    expect(extra.isError).toBe(true);
    expect(textOf(extra)).toMatch(/^MCP error -32602: Input validation error: Invalid arguments for tool memory_usage: .*"month"/s);
    const stranger = await (await connectTo('mem_not-a-key')).callTool({ name: 'memory_usage', arguments: {} });
    expect(stranger.isError).toBe(true);
    expect(textOf(stranger)).toMatch(/^unauthorized: \S/);
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

