import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  MemoryApiError,
  MemoryClient,
  MemoryConnectionError,
  MemoryVersionConflictError,
  type MemoryRecord,
  type RecordInput,
} from '../../sdk/src/index.js';
import { recordSchema } from '../../shared/domain/schemas.js';
import { countingFetch } from '../support/counting-fetch.js';
import { startTestService, type TestService } from '../support/local-service.js';

/**
 * The SDK's update and supersedes against the real local server: the record as PATCH answers it, If-Match
 * from `ifVersion` and its MemoryVersionConflictError, the retry policy of each kind of update when an
 * answer is lost, and superseded records left out of search and listing unless asked for.
 */

const note = (title: string, extra: Partial<RecordInput> = {}): RecordInput => ({ agent_id: 'sdk-update', type: 'fact', title, body: 'Written through the SDK.', ...extra });

/** A fetch that passes requests on and records each one's method, If-Match header and answer status. */
function watchingFetch() {
  const seen: { method: string; ifMatch: string | null; status: number }[] = [];
  const fetcher: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    seen.push({ method: init?.method ?? 'GET', ifMatch: new Headers(init?.headers).get('If-Match'), status: response.status });
    return response;
  };
  return { seen, fetch: fetcher };
}

/** A fetch whose first PATCH reaches the service and is carried out, but whose answer is lost; `meanwhile` runs before the loss is reported. */
function losingFetch(meanwhile: () => Promise<unknown> = async () => undefined) {
  const methods: string[] = [];
  let lost = false;
  const fetcher: typeof fetch = async (input, init) => {
    const method = init?.method ?? 'GET';
    methods.push(method);
    const response = await fetch(input, init);
    if (method === 'PATCH' && !lost) {
      lost = true;
      await response.text();
      await meanwhile();
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) });
    }
    return response;
  };
  return { methods, fetch: fetcher };
}

describe('update and supersedes through the TypeScript SDK', () => {
  let service: TestService;
  let client: MemoryClient;
  const stored = async (title: string, extra: Partial<RecordInput> = {}): Promise<MemoryRecord> => client.get((await client.remember(note(title, extra))).id);

  beforeAll(async () => {
    service = await startTestService();
    client = new MemoryClient({ baseUrl: service.url, apiKey: service.tenant.api_key });
  });
  afterAll(() => service.stop());

  test('update answers the whole record, one version more, and every read sees the new fields', async () => {
    const before = await stored('The office wifi password is orange42', { client: 'acme', metadata: { source: 'chat' } });
    expect(before).toMatchObject({ version: 1, updated_at: null, superseded_by: null });

    const updated = await client.update(before.id, { title: 'The office wifi password is lemon77', client: null, metadata: { source: 'admin' } });
    expect(recordSchema.parse(updated)).toEqual({
      ...before,
      title: 'The office wifi password is lemon77',
      client: null,
      metadata: { source: 'admin' },
      version: 2,
      updated_at: expect.any(String),
      classification: updated.classification,
    });
    expect(Date.parse(updated.updated_at!)).toBeGreaterThanOrEqual(Date.parse(before.created_at));
    expect(await client.get(before.id)).toMatchObject({ title: updated.title, client: null, metadata: { source: 'admin' }, version: 2 });
    expect((await client.recall({ q: 'lemon77' })).map((h) => h.id)).toEqual([before.id]);
    expect(await client.recall({ q: 'orange42' })).toEqual([]);
  });

  test('ifVersion sends If-Match with the version; a stale one is a MemoryVersionConflictError, not retried, and changes nothing', async () => {
    const record = await stored('The standup moved to 9:30');
    const { seen, fetch } = watchingFetch();
    const watched = new MemoryClient({ baseUrl: service.url, apiKey: service.tenant.api_key, fetch });

    const second = await watched.update(record.id, { body: 'Agreed on Monday.' }, { ifVersion: 1 });
    expect(second).toMatchObject({ version: 2, body: 'Agreed on Monday.' });
    const error = await watched.update(record.id, { body: 'A stale edit.' }, { ifVersion: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MemoryVersionConflictError);
    expect(error).toBeInstanceOf(MemoryApiError);
    expect(error).toMatchObject({ name: 'MemoryVersionConflictError', status: 412, code: 'version_conflict' });
    expect(seen).toEqual([
      { method: 'PATCH', ifMatch: '"1"', status: 200 },
      { method: 'PATCH', ifMatch: '"1"', status: 412 },
    ]);
    expect(await client.get(record.id)).toMatchObject({ version: 2, body: 'Agreed on Monday.' });

    // Without ifVersion there is no If-Match, and the update applies to whatever version the record has.
    await watched.update(record.id, { type: 'decision' });
    expect(seen[2]).toEqual({ method: 'PATCH', ifMatch: null, status: 200 });
  });

  test('a conditional update whose answer was lost is repeated, and its own 412 answers the record it made', async () => {
    const record = await stored('The deploy window is Tuesday');
    const { methods, fetch } = losingFetch();
    const flaky = new MemoryClient({ baseUrl: service.url, apiKey: service.tenant.api_key, fetch });
    const updated = await flaky.update(record.id, { title: 'The deploy window is Thursday', metadata: { b: 1, a: [2] } }, { ifVersion: 1 });
    expect(updated).toMatchObject({ id: record.id, version: 2, title: 'The deploy window is Thursday', metadata: { a: [2], b: 1 } });
    // The lost PATCH, its repeat (412), and the read that showed the first had been applied.
    expect(methods).toEqual(['PATCH', 'PATCH', 'GET']);
    expect((await client.get(record.id)).version).toBe(2);
  });

  test("the repeat's 412 is thrown when someone else changed the record after the lost attempt", async () => {
    const record = await stored('The release is on Friday');
    const { methods, fetch } = losingFetch(() => client.update(record.id, { title: 'The release is on Monday' }));
    const flaky = new MemoryClient({ baseUrl: service.url, apiKey: service.tenant.api_key, fetch });
    await expect(flaky.update(record.id, { title: 'The release is on Friday, 10:00' }, { ifVersion: 1 })).rejects.toBeInstanceOf(MemoryVersionConflictError);
    expect(methods).toEqual(['PATCH', 'PATCH', 'GET']);
    expect(await client.get(record.id)).toMatchObject({ version: 3, title: 'The release is on Monday' });
  });

  test('an update without ifVersion whose answer was lost is not repeated: one more version would count', async () => {
    const record = await stored('The printer is on floor 2');
    const { methods, fetch } = losingFetch();
    const flaky = new MemoryClient({ baseUrl: service.url, apiKey: service.tenant.api_key, fetch });
    await expect(flaky.update(record.id, { title: 'The printer is on floor 3' })).rejects.toBeInstanceOf(MemoryConnectionError);
    expect(methods).toEqual(['PATCH']);
    expect(await client.get(record.id)).toMatchObject({ version: 2, title: 'The printer is on floor 3' });
  });

  test('an update without ifVersion that never left is retried, and counts one version', async () => {
    const record = await stored('The cafeteria closes at 3pm');
    let refused = false;
    const { statuses, fetch: counting } = countingFetch();
    const refusingOnce: typeof fetch = async (input, init) => {
      if (!refused) {
        refused = true;
        throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
      }
      return counting(input, init);
    };
    const sdk = new MemoryClient({ baseUrl: service.url, apiKey: service.tenant.api_key, fetch: refusingOnce });
    await expect(sdk.update(record.id, { title: 'The cafeteria closes at 4pm' })).resolves.toMatchObject({ version: 2 });
    expect(statuses).toEqual([200]);
  });

  test('errors: an unknown id is not_found; no field is missing_field; an empty id or a bad ifVersion is refused before any call', async () => {
    const record = await stored('A record to update wrongly');
    await expect(client.update('01937c7a-0000-7000-8000-000000000000', { title: 'x' })).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await expect(client.update(record.id, {})).rejects.toMatchObject({ status: 400, code: 'missing_field' });
    await expect(client.update(record.id, { agent_id: 'other' } as never)).rejects.toMatchObject({ status: 400, code: 'invalid_field' });
    await expect(client.update('', { title: 'x' })).rejects.toThrow(TypeError);
    for (const ifVersion of [0, 1.5, -1, Number.NaN]) await expect(client.update(record.id, { title: 'x' }, { ifVersion })).rejects.toThrow(/ifVersion/);
    expect((await client.get(record.id)).version).toBe(1);
  });

  test('remember with supersedes: search and listing leave the old record out unless include_superseded, and get names its successor', async () => {
    const tenant = await service.newTenant();
    const sdk = new MemoryClient({ baseUrl: service.url, apiKey: tenant.api_key });
    const dark = await sdk.remember(note('User prefers dark mode', { body: 'Said so when setting up the editor.' }));
    const light = await sdk.remember(note('User switched to light mode', { body: 'Dark mode strains their eyes in daylight.', supersedes: [dark.id] }));

    expect(await sdk.get(dark.id)).toMatchObject({ superseded_by: light.id, version: 1 });
    expect((await sdk.get(light.id)).superseded_by).toBeNull();
    const current = await sdk.recall({ q: 'dark or light mode?' });
    expect(current.map((h) => h.id)).toEqual([light.id]);
    const all = await sdk.recall({ q: 'dark or light mode?', include_superseded: true });
    expect(all.map((h) => h.id).sort()).toEqual([dark.id, light.id].sort());
    expect(all.find((h) => h.id === dark.id)?.superseded_by).toBe(light.id);

    expect((await sdk.listPage()).records.map((r) => r.id)).toEqual([light.id]);
    const listed: string[] = [];
    for await (const record of sdk.list({ include_superseded: true, limit: 1 })) listed.push(record.id);
    expect(listed).toEqual([light.id, dark.id]);
  });

  test('remember superseding an unknown id is not_found, naming it, and stores nothing', async () => {
    const tenant = await service.newTenant();
    const sdk = new MemoryClient({ baseUrl: service.url, apiKey: tenant.api_key });
    const missing = '01937c7a-0000-7000-8000-00000000abcd';
    const error = await sdk.remember(note('Replaces nothing that exists', { supersedes: [missing] })).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 404, code: 'not_found', message: expect.stringContaining(missing) });
    expect((await sdk.listPage({ include_superseded: true })).records).toEqual([]);
  });
});
