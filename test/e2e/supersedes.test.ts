/**
 * `supersedes` on `POST /api/v1/record` over real HTTP, on each backend (decisions.md 1.2, "Superseding"):
 * the new record and each superseded one's `superseded_by` in one atomic step, the 404 that names an id and
 * stores nothing, the limits, search and listing leaving superseded records out unless
 * `include_superseded=true`, idempotent replays, and delete and forget of superseded records. And the new
 * user's question of issue 29: "dark or light mode?".
 */
import { aRecord, startTestService, type ApiResponse, type Client, type TestService } from '../support/local-service.js';

let svc: TestService;
let api: Client;
let tenantId: string;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());
beforeEach(async () => {
  const key = await svc.newTenant();
  api = svc.client(key.api_key);
  tenantId = key.tenant_id;
});

const UNKNOWN = '01900000-0000-7000-8000-000000000000';

async function write(overrides: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<string> {
  const r = await api.remember(aRecord(overrides), headers);
  expect(r.status).toBe(201);
  return r.body.id;
}

const get = async (id: string) => (await api.request('GET', `/api/v1/record/${id}`)).body;
const supersededBy = async (id: string) => (await get(id)).superseded_by;
const recordsUsed = async () => (await svc.backend.usage.list(new Date().toISOString().slice(0, 7), tenantId))[0]?.records ?? 0;
const hitIds = async (params: Record<string, string | number>) => (await api.recall(params)).body.map((h: { id: string }) => h.id);
const listed = async (query = '') => (await api.request('GET', `/api/v1/record${query}`)).body.records.map((r: { id: string }) => r.id);

function expectError(r: ApiResponse, status: number, error: string): void {
  expect({ status: r.status, error: r.body?.error }).toEqual({ status, error });
}

test('the new user: "dark or light mode?" finds the light-mode record first, and the dark-mode one only with include_superseded=true', async () => {
  const dark = await write({ title: 'User prefers dark mode', body: 'Said so during setup.' });
  const light = await write({ title: 'User switched to light mode', body: 'Said so in the second session.', supersedes: [dark] });
  expect(await supersededBy(dark)).toBe(light);
  expect(await hitIds({ q: 'dark or light mode?' })).toEqual([light]);
  // Both, ranked on their words alone: being superseded changes what is returned, never a rank.
  const all = (await api.recall({ q: 'dark or light mode?', include_superseded: 'true' })).body;
  expect(all.map((h: any) => [h.id, h.superseded_by]).sort()).toEqual([[dark, light], [light, null]].sort());
});

describe('a write that supersedes', () => {
  test('stores the new record and marks each superseded one, which GET still returns', async () => {
    const olds = [await write({ title: 'old one' }), await write({ title: 'old two' }), await write({ title: 'old three' })];
    const before = await get(olds[0]!);
    const id = await write({ title: 'the new one', supersedes: olds });
    for (const old of olds) expect(await supersededBy(old)).toBe(id);
    expect(await get(id)).toMatchObject({ superseded_by: null, version: 1, updated_at: null });
    // Nothing else of a superseded record changes: superseding is not an update (no new version, no updated_at).
    const after = await get(olds[0]!);
    expect({ ...after, classification: null }).toEqual({ ...before, superseded_by: id, classification: null });
  });

  test('ids compare case-insensitively, and a repeated id supersedes once', async () => {
    const old = await write();
    const id = await write({ supersedes: [old, old.toUpperCase(), old] });
    expect(await supersededBy(old)).toBe(id);
  });

  test('an empty list supersedes nothing', async () => {
    const old = await write();
    await write({ supersedes: [] });
    expect(await supersededBy(old)).toBeNull();
  });

  test('20 ids are accepted; 21 are 400 invalid_field, and nothing is stored', async () => {
    const olds: string[] = [];
    for (let i = 0; i < 21; i++) olds.push(await write({ title: `old ${i}` }));
    const used = await recordsUsed();
    expectError(await api.remember(aRecord({ supersedes: olds })), 400, 'invalid_field');
    expect(await recordsUsed()).toBe(used);
    const id = await write({ supersedes: olds.slice(0, 20) });
    for (const old of olds.slice(0, 20)) expect(await supersededBy(old)).toBe(id);
    expect(await supersededBy(olds[20]!)).toBeNull();
  });

  test.each<[string, unknown]>([
    ['not an array', 'one-id'],
    ['an array holding a number', [1]],
    ['an array holding null', [null]],
    ['an id over 64 characters', ['x'.repeat(65)]],
  ])('supersedes %s is 400 invalid_field', async (_, supersedes) => {
    expectError(await api.remember(aRecord({ supersedes })), 400, 'invalid_field');
  });

  test.each<[string, () => Promise<string>]>([
    ['an unknown id', async () => UNKNOWN],
    ['a malformed id', async () => 'not-a-record-id'],
    ['a deleted record', async () => {
      const id = await write();
      expect((await api.request('DELETE', `/api/v1/record/${id}`)).status).toBe(200);
      return id;
    }],
    ["another tenant's record", async () => (await svc.client(svc.tenant.api_key).remember(aRecord())).body.id],
  ])('%s is 404 not_found naming it; nothing is stored and no quota used', async (_, named) => {
    const kept = [await write({ title: 'kept one' }), await write({ title: 'kept two' })];
    const missing = await named();
    const used = await recordsUsed();
    const before = await listed('?include_superseded=true&limit=100');
    const r = await api.remember(aRecord({ title: 'never stored', supersedes: [kept[0], missing, kept[1]] }));
    expectError(r, 404, 'not_found');
    expect(r.body.message).toContain(missing);
    for (const id of kept) expect(await get(id)).toMatchObject({ superseded_by: null });
    expect(await listed('?include_superseded=true&limit=100')).toEqual(before);
    expect(await hitIds({ q: 'never stored', include_superseded: 'true' })).toEqual([]);
    expect(await recordsUsed()).toBe(used);
  });

  test('a write refused for the quota supersedes nothing; one that also names an unknown id is 404', async () => {
    const key = await svc.newTenant({ recordQuota: 1 });
    const own = svc.client(key.api_key);
    const old = (await own.remember(aRecord())).body.id;
    expectError(await own.remember(aRecord({ supersedes: [old] })), 507, 'record_quota_exceeded');
    expect((await own.request('GET', `/api/v1/record/${old}`)).body.superseded_by).toBeNull();
    // The caller's mistake is named first, whatever the quota says.
    expectError(await own.remember(aRecord({ supersedes: [old, UNKNOWN] })), 404, 'not_found');
  });
});

describe('search and listing leave superseded records out unless include_superseded=true', () => {
  test('search with and without q, with filters, and the listing', async () => {
    const old = await write({ title: 'Heron budget draft', client: 'acme' });
    const current = await write({ title: 'Heron budget final', client: 'acme', supersedes: [old] });
    const cases: Record<string, string>[] = [{ q: 'heron budget' }, {}, { client: 'acme', type: 'fact' }, { q: 'draft' }];
    for (const params of cases) {
      expect(await hitIds(params)).toEqual(params.q === 'draft' ? [] : [current]);
      expect(await hitIds({ ...params, include_superseded: 'false' })).toEqual(await hitIds(params));
      const all = await hitIds({ ...params, include_superseded: 'true' });
      expect([...all].sort()).toEqual((params.q === 'draft' ? [old] : [old, current]).sort());
    }
    const found = (await api.recall({ q: 'draft', include_superseded: 'true' })).body;
    expect(found.map((h: any) => [h.id, h.superseded_by])).toEqual([[old, current]]);
    expect(await listed()).toEqual([current]);
    expect(await listed('?include_superseded=true')).toEqual([current, old]);
    expect(await listed('?include_superseded=true&order=asc&client=acme')).toEqual([old, current]);
  });

  test('a listing cursor keeps include_superseded', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await write({ title: `page ${i}`, ...(i % 2 ? { supersedes: [ids[i - 1]] } : {}) }));
    const first = await api.request('GET', '/api/v1/record?include_superseded=true&order=asc&limit=1');
    expect(first.body.records.map((r: { id: string }) => r.id)).toEqual([ids[0]]);
    const seen = [...first.body.records];
    let cursor: string | null = first.body.next_cursor;
    while (cursor !== null) {
      const page: ApiResponse = await api.request('GET', `/api/v1/record?limit=1&cursor=${encodeURIComponent(cursor)}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.records);
      cursor = page.body.next_cursor;
    }
    expect(seen.map((r) => r.id)).toEqual(ids);
    const again = await api.request('GET', `/api/v1/record?include_superseded=true&limit=1&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect(again.body.records.map((r: { id: string }) => r.id)).toEqual([ids[1]]);
  });

  test.each(['maybe', '1', 'TRUE', 'yes'])('include_superseded=%s is 400 invalid_field, in a search and in a listing', async (value) => {
    expectError(await api.recall({ include_superseded: value }), 400, 'invalid_field');
    expectError(await api.request('GET', `/api/v1/record?include_superseded=${value}`), 400, 'invalid_field');
  });
});

describe('idempotent replays, delete and forget', () => {
  test('a replayed write answers the first 201 and supersedes nothing new', async () => {
    const old = await write();
    const request = aRecord({ title: 'replayed', supersedes: [old] });
    const first = await api.remember(request, { 'idempotency-key': 'supersede-once' });
    expect(first.status).toBe(201);
    const later = await write({ title: 'a later one', supersedes: [old] });
    expect(await supersededBy(old)).toBe(later);
    const replay = await api.remember(request, { 'idempotency-key': 'supersede-once' });
    expect({ status: replay.status, body: replay.body, replayed: replay.headers.get('idempotent-replayed') }).toEqual({ status: 201, body: first.body, replayed: 'true' });
    expect(await supersededBy(old)).toBe(later);
    // Replayed still when the record it superseded is gone.
    expect((await api.request('DELETE', `/api/v1/record/${old}`)).status).toBe(200);
    expect((await api.remember(request, { 'idempotency-key': 'supersede-once' })).body).toEqual(first.body);
    expectError(await api.remember({ ...request, supersedes: [] }, { 'idempotency-key': 'supersede-once' }), 422, 'idempotency_key_reused');
  });

  test('a superseded record can be deleted and forgotten; the record that superseded it stays', async () => {
    const olds = [await write({ agent_id: 'old-agent' }), await write({ agent_id: 'old-agent' })];
    const id = await write({ supersedes: olds });
    expect((await api.request('DELETE', `/api/v1/record/${olds[0]}`)).status).toBe(200);
    const forgot = await api.request('POST', '/api/v1/forget', { body: { ids: [olds[1]] } });
    expect(forgot.body).toEqual({ matched: 1, deleted: 1, dry_run: false });
    for (const old of olds) expect((await api.request('GET', `/api/v1/record/${old}`)).status).toBe(404);
    expect(await listed('?include_superseded=true')).toEqual([id]);
  });

  test('deleting the record that superseded another leaves the other superseded, as it was', async () => {
    const old = await write();
    const id = await write({ supersedes: [old] });
    expect((await api.request('DELETE', `/api/v1/record/${id}`)).status).toBe(200);
    expect(await supersededBy(old)).toBe(id);
    expect(await listed()).toEqual([]);
  });

  test('a superseded record can be updated, and stays superseded', async () => {
    const old = await write({ title: 'Osprey note' });
    const id = await write({ supersedes: [old] });
    const r = await api.update(old, { title: 'Osprey note, corrected' });
    expect(r.body).toMatchObject({ title: 'Osprey note, corrected', superseded_by: id });
    expect(await hitIds({ q: 'osprey' })).toEqual([]);
    expect(await hitIds({ q: 'osprey', include_superseded: 'true' })).toEqual([old]);
  });

  test('a record superseded again points at the newest', async () => {
    const first = await write();
    const second = await write({ supersedes: [first] });
    const third = await write({ supersedes: [first, second] });
    expect([await supersededBy(first), await supersededBy(second), await supersededBy(third)]).toEqual([third, third, null]);
  });
});
