import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { issueKey } from '../../local/tenants.js';
import { MemoryApiError, MemoryClient, MemoryError, MemoryForbiddenError, type RecordInput } from '../../sdk/src/index.js';
import { countingFetch } from '../support/counting-fetch.js';
import { startTestService, type TestService } from '../support/local-service.js';

/**
 * A key that may not make a call, through the SDK against the real local server: a key without the scope a
 * call needs, and a key bound to one agent naming another. Each is a MemoryForbiddenError, thrown after one
 * request: a retry would be refused again.
 */

const note = (title: string, agent_id = 'a'): RecordInput => ({ agent_id, type: 'fact', title, body: 'Written through the SDK.' });

/** The error a call rejects with (fails the test when it resolves). */
async function failureOf(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

function expectForbidden(error: unknown, message: RegExp): void {
  expect(error).toBeInstanceOf(MemoryForbiddenError);
  expect(error).toBeInstanceOf(MemoryApiError);
  expect(error).toBeInstanceOf(MemoryError);
  expect(error).toMatchObject({ name: 'MemoryForbiddenError', status: 403, code: 'forbidden', message: expect.stringMatching(message) });
}

describe('MemoryForbiddenError: a key that may not make the call', () => {
  let service: TestService;
  let full: MemoryClient;
  /** A client of the test tenant with a key issued with `grant`, counting the statuses it gets. */
  const clientWith = async (grant: Parameters<typeof issueKey>[2]) => {
    const { api_key } = await issueKey(service.backend.keys, service.tenant.tenant_id, grant);
    const { statuses, fetch } = countingFetch();
    return { client: new MemoryClient({ baseUrl: service.url, apiKey: api_key, fetch }), statuses };
  };

  beforeAll(async () => {
    service = await startTestService();
    full = new MemoryClient({ baseUrl: service.url, apiKey: service.tenant.api_key });
  });
  afterAll(() => service.stop());

  test("a read-only key's remember is forbidden, naming the write scope; it is not retried and stores nothing", async () => {
    const { client, statuses } = await clientWith({ scopes: ['read'] });
    expectForbidden(await failureOf(client.remember(note('A read-only key wrote this'))), /\bwrite scope\b/);
    expect(statuses).toEqual([403]);
    // The same key may read: nothing was stored.
    await expect(client.recall({ q: 'read-only key wrote' })).resolves.toEqual([]);
  });

  test("a key bound to agent a naming agent b is forbidden, naming the agents; it may still read a's records", async () => {
    await full.remember(note('Agent a keeps this note about zebras', 'a'));
    await full.remember(note('Agent b keeps this note about zebras', 'b'));
    const { client, statuses } = await clientWith({ agentId: 'a' });
    expectForbidden(await failureOf(client.recall({ q: 'zebras', agent_id: 'b' })), /"a".*"b"/);
    expectForbidden(await failureOf(client.remember(note('Agent a writes for b', 'b'))), /"b"/);
    expect(statuses).toEqual([403, 403]);
    const own = await client.recall({ q: 'zebras' });
    expect(own.map((hit) => hit.agent_id)).toEqual(['a']);
  });

  test("a key without the delete scope may not forget or delete, not even a dry run; the records stay", async () => {
    const { id } = await full.remember(note('A record a delete-less key cannot take', 'keeper'));
    const { client, statuses } = await clientWith({ scopes: ['read', 'write'] });
    expectForbidden(await failureOf(client.forget({ agent_id: 'keeper' })), /\bdelete scope\b/);
    expectForbidden(await failureOf(client.forget({ agent_id: 'keeper', dry_run: true })), /\bdelete scope\b/);
    expectForbidden(await failureOf(client.delete(id)), /\bdelete scope\b/);
    expect(statuses).toEqual([403, 403, 403]);
    await expect(client.get(id)).resolves.toMatchObject({ id });
  });

  test("updates: a read-only key is forbidden, naming the write scope; a key bound to agent a finds b's records as unknown, to update or supersede", async () => {
    const { id: ofA } = await full.remember(note('Agent a notes the gate code 1234', 'a'));
    const { id: ofB } = await full.remember(note('Agent b notes the gate code 5678', 'b'));
    const reader = await clientWith({ scopes: ['read'] });
    expectForbidden(await failureOf(reader.client.update(ofA, { title: 'A reader edits this' })), /\bwrite scope\b/);
    expect(reader.statuses).toEqual([403]);

    const { client, statuses } = await clientWith({ agentId: 'a' });
    const other = await failureOf(client.update(ofB, { title: 'Agent a edits b' }));
    expect(other).not.toBeInstanceOf(MemoryForbiddenError);
    expect(other).toMatchObject({ status: 404, code: 'not_found' });
    expect(await failureOf(client.remember({ ...note('Agent a replaces b', 'a'), supersedes: [ofB] }))).toMatchObject({ status: 404, code: 'not_found', message: expect.stringContaining(ofB) });
    await expect(client.update(ofA, { title: 'Agent a notes the gate code 4321' })).resolves.toMatchObject({ id: ofA, version: 2 });
    expect(statuses).toEqual([404, 404, 200]);
    await expect(full.get(ofB)).resolves.toMatchObject({ title: 'Agent b notes the gate code 5678', version: 1, superseded_by: null });
  });

  test('every 403 is a MemoryForbiddenError, whatever its body; other errors are not', async () => {
    const answering = (status: number, body: string): typeof fetch => async () =>
      new Response(body, { status, headers: { 'Content-Type': 'application/json' } });
    const via = (fetcher: typeof fetch) => new MemoryClient({ baseUrl: service.url, apiKey: service.tenant.api_key, fetch: fetcher });

    // A firewall in front of the API (API Gateway's WAF_FILTERED) answers 403 with its own code.
    const waf = await failureOf(via(answering(403, JSON.stringify({ error: 'invalid_request', message: 'The request was refused by the API gateway' }))).recall());
    expect(waf).toBeInstanceOf(MemoryForbiddenError);
    expect(waf).toMatchObject({ status: 403, code: 'invalid_request' });
    const notJson = await failureOf(via(answering(403, '<html>Forbidden</html>')).recall());
    expect(notJson).toBeInstanceOf(MemoryForbiddenError);
    expect(notJson).toMatchObject({ status: 403, code: 'invalid_response' });

    const missing = await failureOf(full.get('01930000-0000-7000-8000-000000000000'));
    expect(missing).toBeInstanceOf(MemoryApiError);
    expect(missing).not.toBeInstanceOf(MemoryForbiddenError);
    expect(missing).toMatchObject({ name: 'MemoryApiError', status: 404, code: 'not_found' });
  });
});
