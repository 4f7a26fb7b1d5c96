import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { MemoryApiError, MemoryClient, MemoryConnectionError, type MemoryRecord, type RecordInput } from '../../sdk/src/index.js';
import { deletedRecordSchema, forgetResultSchema, recordPageSchema, recordSchema } from '../../shared/domain/schemas.js';
import { freePort } from '../../local/free-port.js';
import { startTestService, type TestService } from '../support/local-service.js';

/**
 * The record lifecycle through the SDK, against the real local server: get, delete, one page of a listing,
 * every page through the async iterator (while records are written), forget and its job.
 */

const note = (title: string, overrides: Partial<RecordInput> = {}): RecordInput => ({
  agent_id: 'sdk-lifecycle',
  type: 'fact',
  title,
  body: 'Written through the SDK.',
  ...overrides,
});

/** A fetch that keeps the URL of every GET it passes on. */
function recordingFetch() {
  const urls: URL[] = [];
  const fetcher: typeof fetch = (input, init) => {
    if ((init?.method ?? 'GET') === 'GET') urls.push(new URL(String(input)));
    return fetch(input, init);
  };
  return { urls, fetch: fetcher };
}

const UNKNOWN_ID = '01930000-0000-7000-8000-000000000000';

describe('the record lifecycle through the SDK', () => {
  let service: TestService;
  let client: MemoryClient;

  /** A client of a fresh tenant, so that counts and listings are exact. */
  const freshClient = async (options: { fetch?: typeof fetch } = {}) =>
    new MemoryClient({ baseUrl: service.url, apiKey: (await service.newTenant()).api_key, ...options });

  beforeAll(async () => {
    service = await startTestService();
    client = new MemoryClient({ baseUrl: service.url, apiKey: service.tenant.api_key });
  });
  afterAll(() => service.stop());

  test('get answers the stored record; an unknown, malformed or other tenant\'s id is MemoryApiError not_found', async () => {
    const input = note('The user prefers tea to coffee', { client: 'acme', metadata: { source: 'sdk' } });
    const receipt = await client.remember(input);
    const record = await client.get(receipt.id);
    expect(recordSchema.parse(record)).toEqual({ ...input, id: receipt.id, created_at: receipt.created_at, classification: record.classification, version: 1, updated_at: null, superseded_by: null });

    const other = await freshClient();
    for (const [sdk, id] of [[client, UNKNOWN_ID], [client, 'not-an-id'], [client, 'a/b?c'], [other, receipt.id]] as const) {
      const error = await sdk.get(id).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MemoryApiError);
      expect(error).toMatchObject({ status: 404, code: 'not_found' });
    }
    await expect(client.get('')).rejects.toBeInstanceOf(TypeError);
  });

  test('delete answers {id, deleted_at}; after it get and delete are not_found', async () => {
    const { id } = await client.remember(note('A record to delete'));
    const before = Date.now();
    const deleted = await client.delete(id);
    expect(deletedRecordSchema.parse(deleted)).toEqual({ id, deleted_at: expect.any(String) });
    expect(Date.parse(deleted.deleted_at)).toBeGreaterThanOrEqual(before - 1000);
    await expect(client.get(id)).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await expect(client.delete(id)).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });

  test('listPage answers one page, newest first by default, with a cursor for the next', async () => {
    const sdk = await freshClient();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await sdk.remember(note(`Page note ${i}`))).id);

    const first = recordPageSchema.parse(await sdk.listPage({ limit: 3 }));
    expect(first.records.map((r) => r.id)).toEqual(ids.slice(2).reverse());
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await sdk.listPage({ limit: 3, cursor: first.next_cursor! });
    expect(second).toEqual({ records: expect.any(Array), next_cursor: null });
    expect(second.records.map((r) => r.id)).toEqual(ids.slice(0, 2).reverse());

    const oldest = await sdk.listPage({ order: 'asc', limit: 100 });
    expect(oldest).toEqual({ records: expect.any(Array), next_cursor: null });
    expect(oldest.records.map((r) => r.id)).toEqual(ids);
  });

  test('list iterates over every page, sending the filters with each cursor, and yields each record once while others are written', async () => {
    const { urls, fetch } = recordingFetch();
    const sdk = await freshClient({ fetch });
    const kept: string[] = [];
    for (let i = 0; i < 10; i++) {
      kept.push((await sdk.remember(note(`Kept ${i}`, { agent_id: 'pager', client: 'acme' }))).id);
      await sdk.remember(note(`Other agent ${i}`, { agent_id: 'someone-else', client: 'acme' }));
    }

    for (const order of ['asc', 'desc'] as const) {
      urls.length = 0;
      const seen: MemoryRecord[] = [];
      const written: string[] = [];
      for await (const record of sdk.list({ agent_id: 'pager', client: 'acme', order, limit: 3 })) {
        seen.push(record);
        // A write between two reads of the listing: of the same agent, so that it could land in a page.
        if (seen.length % 2 === 0) written.push((await sdk.remember(note(`Written while paging ${order}`, { agent_id: 'pager', client: 'acme' }))).id);
      }
      const seenIds = seen.map((r) => r.id);
      expect(new Set(seenIds).size).toBe(seenIds.length); // never twice
      for (const id of kept) expect(seenIds).toContain(id); // every record that was there when it began
      expect(seen.every((r) => r.agent_id === 'pager')).toBe(true);
      if (order === 'desc') {
        expect(seenIds).toEqual([...kept].reverse()); // newer records are before the first page
      } else {
        expect(seenIds.slice(0, kept.length)).toEqual(kept); // oldest first, the new ones after
        for (const id of seenIds.slice(kept.length)) expect(written).toContain(id);
      }
      const pages = urls.filter((u) => u.pathname === '/api/v1/record');
      expect(pages.length).toBeGreaterThanOrEqual(4); // at least 10 records, 3 a page
      expect(pages[0]!.searchParams.has('cursor')).toBe(false);
      for (const url of pages) {
        expect(Object.fromEntries([...url.searchParams].filter(([k]) => k !== 'cursor'))).toEqual({ agent_id: 'pager', client: 'acme', order, limit: '3' });
      }
      for (const url of pages.slice(1)) expect(url.searchParams.get('cursor')).toEqual(expect.any(String));
      // Remove what this round wrote, so the next round sees the same records.
      if (written.length > 0) await sdk.forget({ ids: written });
    }
  });

  test('a listing that matches nothing yields nothing, in one call', async () => {
    const { urls, fetch } = recordingFetch();
    const sdk = await freshClient({ fetch });
    const all = [];
    for await (const record of sdk.list({ type: 'signal' })) all.push(record);
    expect(all).toEqual([]);
    expect(urls).toHaveLength(1);
  });

  test('a cursor with other filters, or not one of the service\'s, is MemoryApiError invalid_cursor', async () => {
    const sdk = await freshClient();
    for (let i = 0; i < 3; i++) await sdk.remember(note(`Cursor note ${i}`, { agent_id: 'a' }));
    const { next_cursor } = await sdk.listPage({ agent_id: 'a', limit: 1 });
    expect(next_cursor).toEqual(expect.any(String));

    const error = await sdk.listPage({ agent_id: 'b', cursor: next_cursor! }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MemoryApiError);
    expect(error).toMatchObject({ status: 400, code: 'invalid_cursor', message: expect.stringContaining('filters') });
    // The same filters again, or none, are fine.
    await expect(sdk.listPage({ agent_id: 'a', limit: 1, cursor: next_cursor! })).resolves.toMatchObject({ records: [expect.any(Object)] });
    await expect(sdk.listPage({ limit: 1, cursor: next_cursor! })).resolves.toMatchObject({ records: [expect.any(Object)] });

    // Through the iterator, the error comes out of the loop.
    const loop = async () => {
      for await (const record of sdk.list({ cursor: 'not-a-cursor' })) void record;
    };
    await expect(loop()).rejects.toMatchObject({ name: 'MemoryApiError', status: 400, code: 'invalid_cursor' });
    // Another tenant's cursor is not one of this tenant's.
    const other = await freshClient();
    await expect(other.listPage({ cursor: next_cursor! })).rejects.toMatchObject({ code: 'invalid_cursor' });
  });

  test('list\'s filters are checked like search\'s: a bad until is invalid_until', async () => {
    await expect(client.listPage({ until: 'tomorrow' })).rejects.toMatchObject({ status: 400, code: 'invalid_until' });
    await expect(client.listPage({ limit: 101 })).rejects.toMatchObject({ status: 400, code: 'invalid_limit' });
  });

  test('forget: a dry run counts and deletes nothing; then it deletes what matches every selector', async () => {
    const sdk = await freshClient();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await sdk.remember(note(`Forget me ${i}`, { agent_id: 'forgetful', type: i < 3 ? 'exchange' : 'fact' }))).id);
    const keep = await sdk.remember(note('Keep me', { agent_id: 'keeper', type: 'exchange' }));

    const dry = await sdk.forget({ agent_id: 'forgetful', type: 'exchange', dry_run: true });
    expect(forgetResultSchema.parse(dry)).toEqual({ matched: 3, deleted: 0, dry_run: true });
    await expect(sdk.get(ids[0]!)).resolves.toMatchObject({ id: ids[0] });

    const done = await sdk.forget({ agent_id: 'forgetful', type: 'exchange' });
    expect(done).toEqual({ matched: 3, deleted: 3, dry_run: false });
    if ('job_id' in done) throw new Error('the local server forgets within the request');
    await expect(sdk.get(ids[0]!)).rejects.toMatchObject({ code: 'not_found' });
    const left = [];
    for await (const record of sdk.list({ order: 'asc' })) left.push(record.id);
    expect(left).toEqual([ids[3], keep.id]);

    await expect(sdk.forget({ ids: [ids[3]!, UNKNOWN_ID] })).resolves.toEqual({ matched: 1, deleted: 1, dry_run: false });
    await expect(sdk.forget({ before: '2000-01-01' })).resolves.toEqual({ matched: 0, deleted: 0, dry_run: false });
  });

  test('forget without a selector is MemoryApiError missing_field', async () => {
    await expect(client.forget({})).rejects.toMatchObject({ status: 400, code: 'missing_field' });
    await expect(client.forget({ dry_run: true })).rejects.toMatchObject({ status: 400, code: 'missing_field' });
  });

  test('a forget run as a job answers {job_id, matched}; forgetStatus follows it; an unknown job is not_found', async () => {
    // The local server always forgets within the request; the 202 of a large forget on AWS is played here.
    const requests: string[] = [];
    const jobs: typeof fetch = async (input, init) => {
      const url = new URL(String(input));
      requests.push(`${init?.method} ${url.pathname}`);
      if (url.pathname === '/api/v1/forget') {
        const headers = { 'Content-Type': 'application/json', Location: '/api/v1/forget/job-1' };
        return new Response(JSON.stringify({ job_id: 'job-1', matched: 5000 }), { status: 202, headers });
      }
      if (url.pathname === '/api/v1/forget/job-1') {
        return new Response(JSON.stringify({ status: 'running', matched: 5000, deleted: 1200 }), { status: 200, headers: { 'Content-Type': 'application/json' } });
      }
      return fetch(input, init);
    };
    const sdk = new MemoryClient({ baseUrl: service.url, apiKey: service.tenant.api_key, fetch: jobs });
    const outcome = await sdk.forget({ agent_id: 'bulk' });
    expect(outcome).toEqual({ job_id: 'job-1', matched: 5000 });
    if (!('job_id' in outcome)) throw new Error('expected a job');
    await expect(sdk.forgetStatus(outcome.job_id)).resolves.toEqual({ status: 'running', matched: 5000, deleted: 1200 });
    expect(requests).toEqual(['POST /api/v1/forget', 'GET /api/v1/forget/job-1']);

    await expect(client.forgetStatus('no-such-job')).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await expect(client.forgetStatus('')).rejects.toBeInstanceOf(TypeError);
  });

  test('a delete or forget whose answer is lost is not repeated; one refused before it was sent is', async () => {
    const { id } = await client.remember(note('Deleted once, answer lost'));
    let attempts = 0;
    const lost: typeof fetch = async (input, init) => {
      attempts++;
      await fetch(input, init); // the service deletes…
      throw new TypeError('fetch failed'); // …and the answer never arrives
    };
    const sdk = new MemoryClient({ baseUrl: service.url, apiKey: service.tenant.api_key, fetch: lost });
    await expect(sdk.delete(id)).rejects.toBeInstanceOf(MemoryConnectionError);
    expect(attempts).toBe(1);
    await expect(client.get(id)).rejects.toMatchObject({ code: 'not_found' }); // it was deleted, once
    attempts = 0;
    await expect(sdk.forget({ agent_id: 'nobody' })).rejects.toBeInstanceOf(MemoryConnectionError);
    expect(attempts).toBe(1);
    attempts = 0;
    await expect(sdk.forget({ agent_id: 'nobody', dry_run: true })).rejects.toBeInstanceOf(MemoryConnectionError);
    expect(attempts).toBe(4); // a dry run changes nothing: retried like a read

    let refused = 0;
    const url = `http://127.0.0.1:${await freePort()}`; // nothing listens there
    const closed = new MemoryClient({ baseUrl: url, apiKey: 'mem_x', maxRetries: 2, fetch: (i, o) => (refused++, fetch(i, o)) });
    await expect(closed.delete(UNKNOWN_ID)).rejects.toThrow(/ECONNREFUSED/);
    expect(refused).toBe(3);
  });
});
