import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { MemoryClient } from '../../sdk/src/index.js';
import { ERROR_META_KEY } from '../../mcp/format.js';
import { createMemoryMcpServer } from '../../mcp/tools.js';
import { aRecord, startTestService, type TestService } from '../support/local-service.js';
import { textOf } from './helpers.js';

/**
 * memory_update and memory_remember's supersedes, in process through the official client, against the real
 * local service: what the model reads after an update, a conflict and a supersede, and what recall and
 * list show of superseded records.
 */

let service: TestService;
const clients: Client[] = [];

/** An MCP client of a fresh tenant, so that searches and listings are exact. */
async function fresh(): Promise<Client> {
  const { api_key } = await service.newTenant();
  const server = createMemoryMcpServer(new MemoryClient({ baseUrl: service.url, apiKey: api_key }), { apiUrl: service.url });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'memory-update-test', version: '1.0.0' });
  await client.connect(clientSide);
  clients.push(client);
  return client;
}

const structured = <T>(result: object) => (result as { structuredContent: T }).structuredContent;

/** Stores a record through memory_remember and answers its id. */
async function remember(mcp: Client, overrides: Record<string, unknown>): Promise<string> {
  const result = await mcp.callTool({ name: 'memory_remember', arguments: aRecord(overrides) });
  if (result.isError) throw new Error(textOf(result));
  return structured<{ id: string }>(result).id;
}

beforeAll(async () => {
  service = await startTestService();
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await service?.stop();
});

describe('memory_update', () => {
  test('changes the fields given, says which, and answers the record one version on; search finds the new words only', async () => {
    const mcp = await fresh();
    const id = await remember(mcp, { title: 'The Quimby account manager is Dana', client: 'quimby', metadata: { source: 'chat' } });
    const result = await mcp.callTool({ name: 'memory_update', arguments: { id, title: 'The Quimby account manager is Priya', client: null } });
    expect(result.isError).toBeFalsy();
    const record = structured<{ version: number; updated_at: string; client: string | null; metadata: object }>(result);
    expect(record).toMatchObject({ id, title: 'The Quimby account manager is Priya', client: null, metadata: { source: 'chat' }, version: 2 });
    expect(textOf(result)).toBe(
      `Updated the fact "The Quimby account manager is Priya" (record ${id}): title changed, client removed. ` +
        `It is now version 2 (updated ${record.updated_at}); searches find its new text from now on.`,
    );
    const found = await mcp.callTool({ name: 'memory_recall', arguments: { q: 'Priya' } });
    expect(textOf(found)).toMatch(new RegExp(`\\| id: ${id} \\| version: 2 \\| updated: ${record.updated_at}\\n`));
    expect(structured<{ results: unknown[] }>(await mcp.callTool({ name: 'memory_recall', arguments: { q: 'Dana' } })).results).toEqual([]);
  });

  test('with a stale if_version: version_conflict, what to do about it, and nothing changed', async () => {
    const mcp = await fresh();
    const id = await remember(mcp, { title: 'The Quimby renewal is due in May' });
    expect((await mcp.callTool({ name: 'memory_update', arguments: { id, body: 'Confirmed by email.', if_version: 1 } })).isError).toBeFalsy();
    const stale = await mcp.callTool({ name: 'memory_update', arguments: { id, title: 'The Quimby renewal is due in June', if_version: 1 } });
    expect(stale.isError).toBe(true);
    expect(textOf(stale)).toMatch(/^version_conflict: .+\nThe record was changed since you read it\. Read it again with memory_get, then call memory_update with its current version/);
    expect(stale._meta?.[ERROR_META_KEY]).toMatchObject({ error: 'version_conflict' });
    expect(structured(await mcp.callTool({ name: 'memory_get', arguments: { id } }))).toMatchObject({ title: 'The Quimby renewal is due in May', version: 2 });
  });

  test('errors: an unknown id is not_found; no field is missing_field; agent_id or a version of 0 are refused before any call', async () => {
    const mcp = await fresh();
    const id = await remember(mcp, { title: 'A record nobody corrects' });
    const unknown = await mcp.callTool({ name: 'memory_update', arguments: { id: '01930000-0000-7000-8000-000000000000', title: 'x' } });
    expect(textOf(unknown)).toMatch(/^not_found: /);
    expect(textOf(await mcp.callTool({ name: 'memory_update', arguments: { id } }))).toMatch(/^missing_field: at least one of title, body, type, client, metadata/);
    const refused = '^MCP error -32602: Input validation error: Invalid arguments for tool memory_update: ';
    expect(textOf(await mcp.callTool({ name: 'memory_update', arguments: { id, agent_id: 'other' } }))).toMatch(new RegExp(`${refused}Unrecognized key.*"agent_id"`, 's'));
    expect(textOf(await mcp.callTool({ name: 'memory_update', arguments: { id, title: 'x', if_version: 0 } }))).toMatch(new RegExp(`${refused}.* at if_version$`, 's'));
    expect(structured(await mcp.callTool({ name: 'memory_get', arguments: { id } }))).toMatchObject({ version: 1 });
  });
});

describe('memory_remember with supersedes', () => {
  test('the new record replaces the old one in recall and list, which show it again with include_superseded, naming its successor', async () => {
    const mcp = await fresh();
    const dark = await remember(mcp, { title: 'User prefers dark mode', body: 'Said so in March.' });
    const result = await mcp.callTool({ name: 'memory_remember', arguments: aRecord({ title: 'User switched to light mode', body: 'Said so in June.', supersedes: [dark] }) });
    const light = structured<{ id: string; created_at: string }>(result);
    expect(textOf(result)).toBe(
      `Stored the fact "User switched to light mode" as record ${light.id} (created ${light.created_at}). ` +
        `It supersedes record ${dark}: searches and listings leave it out from now on, and memory_get still reads it.`,
    );

    const current = await mcp.callTool({ name: 'memory_recall', arguments: { q: 'dark or light mode?' } });
    expect(structured<{ results: { id: string }[] }>(current).results.map((h) => h.id)).toEqual([light.id]);
    const history = await mcp.callTool({ name: 'memory_recall', arguments: { q: 'dark or light mode?', include_superseded: true } });
    expect(structured<{ results: { id: string }[] }>(history).results.map((h) => h.id).sort()).toEqual([dark, light.id].sort());
    expect(textOf(history)).toMatch(/^2 records \(q="dark or light mode\?", include_superseded=true, min_rank=0\.\d+; best match first\):/);
    expect(textOf(history)).toContain(`| id: ${dark} | superseded by: ${light.id}\n`);

    expect(structured<{ records: { id: string }[] }>(await mcp.callTool({ name: 'memory_list', arguments: {} })).records.map((r) => r.id)).toEqual([light.id]);
    const listed = await mcp.callTool({ name: 'memory_list', arguments: { include_superseded: true } });
    expect(textOf(listed)).toMatch(/^2 records \(include_superseded=true; newest first\):/);
    expect(textOf(await mcp.callTool({ name: 'memory_get', arguments: { id: dark } }))).toContain(`| id: ${dark} | version: 1 | superseded by: ${light.id}\n`);
  });

  test('superseding an id this key cannot read is not_found, naming it, and stores nothing', async () => {
    const mcp = await fresh();
    const missing = '01930000-0000-7000-8000-00000000beef';
    const result = await mcp.callTool({ name: 'memory_remember', arguments: aRecord({ title: 'Replaces a ghost', supersedes: [missing] }) });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(new RegExp(`^not_found: .*${missing}`));
    expect(structured<{ records: unknown[] }>(await mcp.callTool({ name: 'memory_list', arguments: { include_superseded: true } })).records).toEqual([]);
  });
});
