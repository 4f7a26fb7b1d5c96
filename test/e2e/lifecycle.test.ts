/**
 * The record lifecycle over HTTP (decisions.md, "Version 1.1"), on each backend: records by id, listing
 * with a cursor, forgetting many records; and that no read ever returns a deleted record, with reads racing
 * the deletes.
 */
import { flipCharacter, resealUnkeyed } from '../support/forged-cursor.js';
import { aRecord, startTestService, type Client, type TestService } from '../support/local-service.js';

let svc: TestService;
let api: Client;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());
beforeEach(async () => {
  api = svc.client((await svc.newTenant()).api_key);
});

async function write(overrides: Record<string, unknown> = {}): Promise<{ id: string; created_at: string; tenant_id: string; location: string }> {
  const r = await api.remember(aRecord(overrides));
  expect(r.status).toBe(201);
  return { ...r.body, location: r.headers.get('location')! };
}

const listPage = (query: string) => api.request('GET', `/api/v1/record${query}`);

/** Every record of a listing, page after page, with the query string `query` on every page. */
async function listAll(query: Record<string, string>, between?: () => Promise<void>): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams({ ...query, ...(cursor === null ? {} : { cursor }) });
    const r = await listPage(`?${params.toString()}`);
    expect(r.status).toBe(200);
    ids.push(...r.body.records.map((x: { id: string }) => x.id));
    cursor = r.body.next_cursor;
    await between?.();
  } while (cursor !== null);
  return ids;
}

describe('records by id', () => {
  test('the Location of a 201 reads the record back, every field as written, and counts no quota', async () => {
    const metadata = { nested: { list: [1, 'two', null] } };
    const w = await write({ client: 'acme', metadata });
    const r = await api.request('GET', w.location);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id: w.id,
      agent_id: 'agent-1',
      type: 'fact',
      title: 'The user prefers dark mode',
      body: 'Noted during setup.',
      client: 'acme',
      created_at: w.created_at,
      metadata,
      // The background worker may have classified it already.
      classification: r.body.classification === null ? null : expect.objectContaining({ type: expect.any(String), model: expect.any(String) }),
      version: 1,
      updated_at: null,
      superseded_by: null,
    });
    expect(Object.keys(r.body)).toEqual(['id', 'agent_id', 'type', 'title', 'body', 'client', 'created_at', 'metadata', 'classification', 'version', 'updated_at', 'superseded_by']);
    expect(r.headers.get('etag')).toBe('"1"');
    expect((await api.request('GET', `/api/v1/record/${w.id.toUpperCase()}`)).body.id).toBe(w.id);
  });

  test.each(['01900000-0000-7000-8000-000000000000', 'not-an-id', '%00', 'x'.repeat(300)])('%s is 404, as a deleted record is', async (id) => {
    const r = await api.request('GET', `/api/v1/record/${encodeURIComponent(id)}`);
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 404, error: 'not_found' });
  });

  test('a delete answers the id and the time; then the record is 404 to get and delete, and gone from search and listing', async () => {
    const kept = await write({ title: 'Kept zephyr' });
    const w = await write({ title: 'Deleted zephyr' });
    const r = await api.request('DELETE', `/api/v1/record/${w.id}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: w.id, deleted_at: expect.any(String) });
    expect(Date.parse(r.body.deleted_at)).toBeGreaterThanOrEqual(Date.parse(w.created_at));
    for (const method of ['GET', 'DELETE']) expect((await api.request(method, `/api/v1/record/${w.id}`)).body.error).toBe('not_found');
    expect((await api.recall({ q: 'zephyr' })).body.map((h: { id: string }) => h.id)).toEqual([kept.id]);
    expect(await listAll({})).toEqual([kept.id]);
  });
});

describe('listing', () => {
  test('newest first by default, oldest first with order=asc; every record once across pages', async () => {
    const written = [];
    for (let i = 0; i < 7; i++) written.push((await write({ title: `r${i}` })).id);
    expect(await listAll({ limit: '3' })).toEqual([...written].reverse());
    expect(await listAll({ limit: '2', order: 'asc' })).toEqual(written);
    const first = await listPage('?limit=7');
    expect(first.body.next_cursor).toBeNull();
  });

  test('paging from the first page to the last returns each matching record exactly once while writes go on', async () => {
    const before = [];
    for (let i = 0; i < 12; i++) before.push((await write({ agent_id: i % 3 === 0 ? 'third' : 'other' })).id);
    const wanted = before.filter((_, i) => i % 3 === 0);
    for (const order of ['desc', 'asc']) {
      // Writes between the first pages (oldest-first paging under endless writes would never end).
      let pages = 0;
      const seen = await listAll({ agent_id: 'third', limit: '1', order }, async () => {
        if (pages++ >= 6) return;
        await write({ agent_id: 'third' });
        await write({ agent_id: 'other' });
      });
      expect(new Set(seen).size).toBe(seen.length);
      for (const id of wanted) expect(seen).toContain(id);
    }
  });

  test('filters: agent_id, type, client, since (inclusive), until (exclusive)', async () => {
    // A few milliseconds apart, so that each has a time of its own to filter by.
    const pause = () => new Promise((resolve) => setTimeout(resolve, 3));
    const a = await write({ agent_id: 'x', type: 'decision', client: 'acme' });
    await pause();
    const b = await write({ agent_id: 'y', type: 'decision' });
    await pause();
    const c = await write({ agent_id: 'x', type: 'fact', client: 'acme' });
    expect(await listAll({ agent_id: 'x', order: 'asc' })).toEqual([a.id, c.id]);
    expect(await listAll({ type: 'decision', client: 'acme' })).toEqual([a.id]);
    expect(await listAll({ since: b.created_at, until: c.created_at, order: 'asc' })).toEqual([b.id]);
    expect(await listAll({ until: '2000-01-01' })).toEqual([]);
  });

  test('a cursor carries its filters and order: the same again or none continue; others are 400 invalid_cursor', async () => {
    for (let i = 0; i < 3; i++) await write({ agent_id: 'x', client: 'acme' });
    const first = await listPage('?agent_id=x&client=acme&limit=1&order=asc');
    const cursor = encodeURIComponent(first.body.next_cursor);
    expect((await listPage(`?agent_id=x&client=acme&order=asc&limit=1&cursor=${cursor}`)).status).toBe(200);
    expect((await listPage(`?cursor=${cursor}`)).status).toBe(200);
    for (const query of [`?agent_id=y&client=acme&cursor=${cursor}`, `?agent_id=x&cursor=${cursor}`, `?order=desc&cursor=${cursor}`, '?cursor=garbage', `?cursor=${cursor}x`]) {
      const r = await listPage(query);
      expect({ status: r.status, error: r.body.error }).toEqual({ status: 400, error: 'invalid_cursor' });
    }
  });

  test('a cursor re-sealed by the caller, with the unkeyed check of tenant and payload, is 400 invalid_cursor', async () => {
    const mine = [];
    for (let i = 0; i < 3; i++) mine.push(await write({ agent_id: 'x' }));
    await write({ agent_id: 'y' });
    const tenantId = mine[0]!.tenant_id;
    const first = await listPage('?agent_id=x&order=asc&limit=1');
    const cursor: string = first.body.next_cursor;
    const forgeries = {
      // The payload as it came, sealed again: the check alone must be the service's.
      'the same payload': resealUnkeyed(tenantId, cursor),
      // Back to the start of the listing, to read a page again or past its end.
      'another position': resealUnkeyed(tenantId, cursor, (p) => ({ ...p, p: ['0001-01-01T00:00:00.000Z', ''] })),
      // Other filters: agent y's records on a listing that asked for agent x's.
      'other filters': resealUnkeyed(tenantId, cursor, (p) => ({ ...p, f: {} })),
      'another order': resealUnkeyed(tenantId, cursor, (p) => ({ ...p, o: 'desc' })),
    };
    const answers = [];
    for (const [what, forged] of Object.entries(forgeries)) {
      const r = await listPage(`?cursor=${encodeURIComponent(forged)}`);
      answers.push({ what, status: r.status, error: r.body.error, records: r.body.records?.length });
    }
    expect(answers).toEqual(Object.keys(forgeries).map((what) => ({ what, status: 400, error: 'invalid_cursor', records: undefined })));
    // The cursor as it came still pages on.
    const second = await listPage(`?limit=1&cursor=${encodeURIComponent(cursor)}`);
    expect({ status: second.status, ids: second.body.records.map((r: { id: string }) => r.id) }).toEqual({ status: 200, ids: [mine[1]!.id] });
  });

  test('a cursor with any one character changed is 400 invalid_cursor', async () => {
    for (let i = 0; i < 2; i++) await write();
    const cursor: string = (await listPage('?limit=1')).body.next_cursor;
    const tag = cursor.indexOf('.');
    // The payload's first and last characters, the dot, and every character of the tag.
    for (const index of [0, tag - 1, tag, ...Array.from({ length: cursor.length - tag - 1 }, (_, k) => tag + 1 + k)]) {
      const r = await listPage(`?cursor=${encodeURIComponent(flipCharacter(cursor, index))}`);
      expect({ index, status: r.status, error: r.body.error }).toEqual({ index, status: 400, error: 'invalid_cursor' });
    }
  });

  test('a cursor stays valid across a restart of the server on the same data', async () => {
    const own = await startTestService();
    try {
      const client = own.client(own.tenant.api_key);
      const ids = [];
      for (let i = 0; i < 3; i++) ids.push((await client.remember(aRecord({ title: `r${i}` }))).body.id);
      const first = await client.request('GET', '/api/v1/record?order=asc&limit=1');
      await own.restart();
      const second = await client.request('GET', `/api/v1/record?cursor=${encodeURIComponent(first.body.next_cursor)}`);
      expect({ status: second.status, ids: second.body.records.map((r: { id: string }) => r.id) }).toEqual({ status: 200, ids: ids.slice(1) });
    } finally {
      await own.stop();
    }
  });

  test.each([
    ['?limit=0', 'invalid_limit'],
    ['?limit=101', 'invalid_limit'],
    ['?since=yesterday', 'invalid_since'],
    ['?until=2026-13-01', 'invalid_until'],
    ['?type=memo', 'invalid_type'],
    ['?order=sideways', 'invalid_field'],
  ])('%s is 400 %s', async (query, error) => {
    const r = await listPage(query);
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 400, error });
  });
});

describe('forget', () => {
  const forget = (body: unknown) => api.request('POST', '/api/v1/forget', { body });

  test('deletes what matches every selector; a dry run counts and keeps; later records are untouched', async () => {
    const x1 = await write({ agent_id: 'x', type: 'decision' });
    const x2 = await write({ agent_id: 'x', type: 'fact' });
    const y = await write({ agent_id: 'y', type: 'decision' });
    expect((await forget({ agent_id: 'x', dry_run: true })).body).toEqual({ matched: 2, deleted: 0, dry_run: true });
    expect((await api.request('GET', x1.location)).status).toBe(200);
    expect((await forget({ agent_id: 'x', type: 'decision' })).body).toEqual({ matched: 1, deleted: 1, dry_run: false });
    // Ids as UUIDs compare: in capitals too; one that cannot be an id matches nothing.
    expect((await forget({ ids: [x2.id.toUpperCase(), y.id, 'not-an-id'], type: 'fact' })).body).toEqual({ matched: 1, deleted: 1, dry_run: false });
    const z = await write({ agent_id: 'x' });
    expect(await listAll({ order: 'asc' })).toEqual([y.id, z.id]);
    expect((await forget({ before: z.created_at })).body).toEqual({ matched: 1, deleted: 1, dry_run: false });
    expect(await listAll({})).toEqual([z.id]);
  });

  test.each([
    [{}, 'missing_field'],
    [{ dry_run: true }, 'missing_field'],
    [{ agent_id: '' }, 'invalid_field'],
    [{ before: 'last week' }, 'invalid_field'],
    [{ ids: [] }, 'invalid_field'],
    [{ ids: Array.from({ length: 1001 }, (_, i) => String(i)) }, 'invalid_field'],
    [{ type: 'memo' }, 'invalid_type'],
    [{ agent_id: 'x', tenant: 'everyone' }, 'invalid_field'],
  ])('%j is 400 %s', async (body, error) => {
    const r = await forget(body);
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 400, error });
    expect(r.body.message).not.toMatch(/Invalid|expected/);
  });
});

test('no read returns a record once its delete has answered, with searches, listings and gets racing the deletes', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 40; i++) ids.push((await write({ title: `racing zephyr ${i}`, agent_id: 'racer' })).id);
  await svc.backend.settle();
  const deletedAt = new Map<string, number>();
  let deleting = true;
  const violations: string[] = [];
  const check = (what: string, started: number, found: string[]) => {
    for (const id of found) {
      const at = deletedAt.get(id);
      if (at !== undefined && at < started) violations.push(`${what} returned ${id}, deleted before the read began`);
    }
  };
  const reader = async (read: () => Promise<string[]>, what: string) => {
    while (deleting) {
      const started = performance.now();
      check(what, started, await read());
    }
  };
  const readers = [
    reader(async () => (await api.request('GET', '/api/v1/query?q=zephyr&limit=100')).body.map((h: { id: string }) => h.id), 'search'),
    reader(async () => (await api.request('GET', '/api/v1/query?limit=100&agent_id=racer')).body.map((h: { id: string }) => h.id), 'newest'),
    reader(async () => (await listPage('?limit=100')).body.records.map((r: { id: string }) => r.id), 'list'),
    reader(async () => {
      const id = ids[Math.floor(Math.random() * ids.length)]!;
      const r = await api.request('GET', `/api/v1/record/${id}`);
      return r.status === 200 ? [r.body.id] : [];
    }, 'get'),
  ];
  for (const [i, id] of ids.entries()) {
    if (i % 10 === 9) {
      const r = await api.request('POST', '/api/v1/forget', { body: { ids: [id] } });
      expect(r.body.deleted).toBe(1);
    } else {
      expect((await api.request('DELETE', `/api/v1/record/${id}`)).status).toBe(200);
    }
    deletedAt.set(id, performance.now());
  }
  deleting = false;
  await Promise.all(readers);
  expect(violations).toEqual([]);
  expect(await listAll({})).toEqual([]);
});
