/**
 * Route security, in the style of Unkey's runCommonRouteTests: every route of the API refuses a missing,
 * wrong or revoked key, and a revoked key leaves the tenant's other keys working. The one public route is
 * the OpenAPI document. Then tenant isolation: no filter ever lets one tenant see another's records.
 */
import { readFileSync } from 'node:fs';
import { issueKey, type IssuedKey } from '../../local/tenants.js';
import { hashApiKey } from '../../shared/domain/api-key.js';
import { SCOPES, type Scope } from '../../shared/domain/tenant.js';
import { aRecord, startTestService, type TestService } from '../support/local-service.js';
import { checkAnswer } from '../support/response-shapes.js';

interface Reply {
  status: number;
  contentType: string | null;
  text: string;
  allow: string | null;
  body: any;
}

let svc: TestService;

// The authorizer cache is off so that a revoked key is refused at once.
beforeAll(async () => {
  svc = await startTestService({ MEMORY_AUTH_CACHE_SECONDS: '0' });
});
afterAll(() => svc.stop());

/** One request with `Authorization` set to `authorization` (none when null); its answer must fit the documented schemas. */
async function send(method: string, path: string, authorization: string | null, json?: unknown): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (authorization !== null) headers['authorization'] = authorization;
  if (json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(svc.url + path, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
  const text = await res.text();
  const body: unknown = text === '' ? undefined : JSON.parse(text);
  checkAnswer(method, path, res.status, res.headers, body);
  return { status: res.status, contentType: res.headers.get('content-type'), text, allow: res.headers.get('allow'), body };
}

const bearer = (key: string) => `Bearer ${key}`;

/** `/api/v1/record/{id}` of a new record of the key's tenant. */
async function recordOf(apiKey: string): Promise<string> {
  const res = await fetch(svc.url + '/api/v1/record', {
    method: 'POST',
    headers: { authorization: bearer(apiKey), 'content-type': 'application/json' },
    body: JSON.stringify(aRecord()),
  });
  expect(res.status).toBe(201);
  return res.headers.get('location')!;
}

function expectUnauthorized(r: Reply): void {
  expect({ status: r.status, body: r.body }).toMatchObject({ status: 401, body: { error: 'unauthorized', message: expect.stringMatching(/\S/) } });
  expect(r.contentType).toMatch(/^application\/json(;|$)/);
}

interface RouteUnderTest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** The path, or how to make one for the tenant of a key (a record of that tenant to read or delete). */
  path: string | ((apiKey: string) => Promise<string>);
  /** The status a valid request answers. */
  okStatus: number;
  /** A valid request body, for POST and PATCH routes. */
  body?: unknown;
  /** Or how to make one for the tenant of a key (a write that supersedes a record of that tenant). */
  bodyFor?: (apiKey: string) => Promise<unknown>;
}

/** A write that supersedes a new record of the key's tenant. */
async function supersedingWrite(apiKey: string): Promise<unknown> {
  return aRecord({ title: 'The newer record', supersedes: [(await recordOf(apiKey)).split('/').pop()] });
}

/** The checks every route must pass: no key, wrong keys and a revoked key are refused; other keys still work. */
function runCommonRouteTests(route: RouteUnderTest): void {
  const pathFor = async (apiKey: string) => (typeof route.path === 'string' ? route.path : route.path(apiKey));
  // A refused key is asked about a path that would answer for the tenant of `owner`'s key.
  const call = async (authorization: string | null, owner = svc.tenant.api_key) =>
    send(route.method, await pathFor(owner), authorization, route.bodyFor ? await route.bodyFor(owner) : route.body);
  const name = (typeof route.path === 'string' ? route.path : route.path.name) + (route.bodyFor ? ` (${route.bodyFor.name})` : '');

  describe(`${route.method} ${name}`, () => {
    test(`a valid key answers ${route.okStatus}`, async () => {
      const r = await call(bearer(svc.tenant.api_key));
      expect(r.status).toBe(route.okStatus);
      expect(r.contentType).toMatch(/^application\/json(;|$)/);
    });

    test('no key: 401', async () => {
      expectUnauthorized(await call(null));
    });

    test.each<[string, () => string]>([
      ['an unknown key of the right shape', () => bearer(`mem_${'A'.repeat(43)}`)],
      ['a valid key with its last character changed', () => bearer(svc.tenant.api_key.slice(0, -1) + (svc.tenant.api_key.endsWith('x') ? 'y' : 'x'))],
      ['a valid key cut short', () => bearer(svc.tenant.api_key.slice(0, 20))],
      ['the stored hash of a valid key', () => bearer(hashApiKey(svc.tenant.api_key))],
      ['the key id of a valid key', () => bearer(svc.tenant.key_id)],
      ['the tenant id', () => bearer(svc.tenant.tenant_id)],
      ['a valid key in another scheme', () => `Basic ${svc.tenant.api_key}`],
      ['a valid key with no scheme', () => svc.tenant.api_key],
      ['an empty token', () => 'Bearer '],
    ])('a wrong key (%s): 401', async (_, authorization) => {
      expectUnauthorized(await call(authorization()));
    });

    test('a revoked key: 401, while another key of the same tenant still works', async () => {
      const tenant = await svc.newTenant();
      const other = await issueKey(svc.backend.keys, tenant.tenant_id);
      expect((await call(bearer(tenant.api_key), tenant.api_key)).status).toBe(route.okStatus);
      expect((await call(bearer(other.api_key), other.api_key)).status).toBe(route.okStatus);

      expect(await svc.backend.keys.revoke({ keyId: tenant.key_id })).toMatchObject({ key_id: tenant.key_id, status: 'revoked' });

      expectUnauthorized(await call(bearer(tenant.api_key), other.api_key));
      expectUnauthorized(await call(`bearer ${tenant.api_key}`, other.api_key));
      const still = await call(bearer(other.api_key), other.api_key);
      expect(still.status).toBe(route.okStatus);
      if (route.okStatus === 201) expect(still.body.tenant_id).toBe(tenant.tenant_id);
    });
  });
}

describe('every route authenticates', () => {
  runCommonRouteTests({ method: 'POST', path: '/api/v1/record', okStatus: 201, body: aRecord() });
  runCommonRouteTests({ method: 'GET', path: '/api/v1/query', okStatus: 200 });
  runCommonRouteTests({ method: 'GET', path: '/api/v1/query?q=dark&limit=5', okStatus: 200 });
  runCommonRouteTests({ method: 'GET', path: '/api/v1/record', okStatus: 200 });
  runCommonRouteTests({ method: 'GET', path: '/api/v1/record?agent_id=agent-1&order=asc&limit=5', okStatus: 200 });
  runCommonRouteTests({ method: 'GET', path: recordOf, okStatus: 200 });
  runCommonRouteTests({ method: 'DELETE', path: recordOf, okStatus: 200 });
  runCommonRouteTests({ method: 'PATCH', path: recordOf, okStatus: 200, body: { title: 'The user now prefers light mode' } });
  runCommonRouteTests({ method: 'POST', path: '/api/v1/record', okStatus: 201, bodyFor: supersedingWrite });
  runCommonRouteTests({ method: 'POST', path: '/api/v1/forget', okStatus: 200, body: { agent_id: 'nobody-at-all', dry_run: true } });
  runCommonRouteTests({ method: 'GET', path: '/api/v1/usage', okStatus: 200 });
  runCommonRouteTests({ method: 'POST', path: '/v1/classify', okStatus: 200, body: { title: 'We chose SQLite', body: 'Decided today.' } });
  runCommonRouteTests({ method: 'POST', path: '/api/v1/classify', okStatus: 200, body: { title: 'We chose SQLite', body: 'Decided today.' } });
});

describe('the one public route: GET /openapi.json', () => {
  const committed = readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8');

  test.each<[string, () => string | null]>([
    ['no key', () => null],
    ['a wrong key', () => bearer(`mem_${'A'.repeat(43)}`)],
    ['a valid key', () => bearer(svc.tenant.api_key)],
  ])('answers docs/openapi.json as JSON with %s', async (_, authorization) => {
    const r = await send('GET', '/openapi.json', authorization());
    expect({ status: r.status, contentType: r.contentType }).toEqual({ status: 200, contentType: 'application/json' });
    expect(r.text).toBe(committed);
  });

  test('is not rate-limited: a key with burst 1 does not run out on it', async () => {
    const tenant = await svc.newTenant({ rate: 1, burst: 1 });
    for (let i = 0; i < 3; i++) expect((await send('GET', '/openapi.json', bearer(tenant.api_key))).status).toBe(200);
    expect((await send('GET', '/api/v1/query', bearer(tenant.api_key))).status).toBe(200);
  });

  test.each(['POST', 'PUT', 'DELETE'])('%s /openapi.json is 405 with Allow: GET, HEAD', async (method) => {
    const r = await send(method, '/openapi.json', null);
    expect({ status: r.status, error: r.body?.error, allow: r.allow }).toEqual({ status: 405, error: 'method_not_allowed', allow: 'GET, HEAD' });
  });
});

describe('tenant isolation', () => {
  let a: IssuedKey;
  let b: IssuedKey;
  const idsOf: Record<'a' | 'b', string[]> = { a: [], b: [] };
  const shared = { agent_id: 'shared-agent', client: 'shared-client' };

  const search = async (key: IssuedKey, params: Record<string, string>) => {
    await svc.backend.settle();
    const r = await send('GET', `/api/v1/query?${new URLSearchParams(params).toString()}`, bearer(key.api_key));
    expect({ status: r.status, isArray: Array.isArray(r.body) }).toEqual({ status: 200, isArray: true });
    return (r.body as { id: string }[]).map((hit) => hit.id);
  };

  const write = async (key: IssuedKey, record: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(svc.url + '/api/v1/record', {
      method: 'POST',
      headers: { authorization: bearer(key.api_key), 'content-type': 'application/json', ...headers },
      body: JSON.stringify(record),
    });
    const body = (await res.json()) as { id: string; tenant_id: string };
    expect(res.status).toBe(201);
    expect(body.tenant_id).toBe(key.tenant_id);
    return body.id;
  };

  beforeAll(async () => {
    a = await svc.newTenant({}, 'tenant-a');
    b = await svc.newTenant({}, 'tenant-b');
    for (const [type, title] of [
      ['decision', 'Zebra quasar nebula: we decided on the zebra plan'],
      ['fact', 'The user prefers zebra stripes and quasar themes'],
      ['open_item', 'Follow up on the nebula quasar report'],
    ] as const) {
      idsOf.a.push(await write(a, aRecord({ ...shared, type, title, body: 'zebra quasar nebula details', metadata: { owner: 'tenant-b' } })));
    }
    idsOf.b.push(await write(b, aRecord({ ...shared, type: 'decision', title: 'Tenant B keeps its orchid notes', body: 'orchid only' })));
  });

  test('the records are there for their owner (the searches below are not vacuous)', async () => {
    expect((await search(a, { q: 'zebra' })).sort()).toEqual([...idsOf.a].sort());
    expect(await search(b, { q: 'orchid' })).toEqual(idsOf.b);
  });

  test.each<[string, Record<string, string>]>([
    ['no q', {}],
    ['a blank q', { q: '   ' }],
    ["q matching A's words", { q: 'zebra quasar nebula' }],
    ["a phrase of A's title", { q: '"zebra quasar"' }],
    ['q with operators', { q: 'zebra OR quasar OR *' }],
    ['a lone *', { q: '*' }],
    ['the same agent_id', { agent_id: shared.agent_id }],
    ['the same client', { client: shared.client }],
    ['the same type', { type: 'decision' }],
    ["a type only A has", { type: 'open_item' }],
    ['every shared filter with q', { q: 'zebra', agent_id: shared.agent_id, client: shared.client, type: 'fact' }],
    ['an old since and the largest limit', { since: '2000-01-01', limit: '100' }],
    ["q matching A's metadata", { q: 'tenant-b' }],
  ])('tenant B never sees A\'s records: %s', async (_, params) => {
    const found = await search(b, params);
    for (const id of found) expect(idsOf.b).toContain(id);
    for (const id of idsOf.a) expect(found).not.toContain(id);
  });

  test("q naming A's record id or tenant id finds nothing of A's", async () => {
    for (const q of [idsOf.a[0]!, a.tenant_id]) {
      const found = await search(b, { q });
      for (const id of idsOf.a) expect(found).not.toContain(id);
    }
  });

  test("tenant A's search only returns A's records", async () => {
    const cases: Record<string, string>[] = [{}, { q: 'orchid' }, { q: 'zebra orchid' }, { type: 'decision' }, { agent_id: shared.agent_id }];
    for (const params of cases) {
      const found = await search(a, params);
      for (const id of found) expect(idsOf.a).toContain(id);
      expect(found).not.toContain(idsOf.b[0]);
    }
  });

  test('a tenant with no records finds nothing', async () => {
    const c = await svc.newTenant({}, 'tenant-c');
    expect(await search(c, {})).toEqual([]);
    expect(await search(c, { q: 'zebra orchid', agent_id: shared.agent_id })).toEqual([]);
  });

  test("another tenant's Idempotency-Key does not replay its record", async () => {
    const record = aRecord({ title: 'Same request about a kumquat, sent by two tenants' });
    const headers = { 'idempotency-key': 'isolation-key-1' };
    const fromA = await write(a, record, headers);
    const fromB = await write(b, record, headers);
    idsOf.a.push(fromA);
    idsOf.b.push(fromB);
    expect(fromB).not.toBe(fromA);
    expect(await search(b, { q: 'kumquat' })).toEqual([fromB]);
    expect(await search(a, { q: 'kumquat' })).toEqual([fromA]);
  });

  test('a second key of the same tenant sees the same records, and nothing more', async () => {
    const second = await issueKey(svc.backend.keys, b.tenant_id);
    expect(await search(second, {})).toEqual(await search(b, {}));
  });

  test("another tenant's record id is 404 to get and to delete, as an unknown one is, and stays", async () => {
    for (const method of ['GET', 'DELETE']) {
      const theirs = await send(method, `/api/v1/record/${idsOf.a[0]}`, bearer(b.api_key));
      const unknown = await send(method, '/api/v1/record/01900000-0000-7000-8000-000000000000', bearer(b.api_key));
      expect(theirs.body).toEqual(unknown.body);
      expect(theirs.status).toBe(404);
    }
    expect((await send('GET', `/api/v1/record/${idsOf.a[0]}`, bearer(a.api_key))).status).toBe(200);
  });

  test("a listing shows the tenant's records only, with every filter", async () => {
    for (const query of ['', `?agent_id=${shared.agent_id}`, `?client=${shared.client}&type=decision`, '?order=asc&limit=100']) {
      const r = await send('GET', `/api/v1/record${query}`, bearer(b.api_key));
      expect(r.status).toBe(200);
      for (const record of r.body.records as { id: string }[]) expect(idsOf.b).toContain(record.id);
    }
  });

  test("a forget naming another tenant's ids or selectors matches nothing of it", async () => {
    const r = await send('POST', '/api/v1/forget', bearer(b.api_key), { ids: idsOf.a, agent_id: shared.agent_id });
    expect(r.body).toEqual({ matched: 0, deleted: 0, dry_run: false });
    for (const id of idsOf.a) expect((await send('GET', `/api/v1/record/${id}`, bearer(a.api_key))).status).toBe(200);
  });

  test("another tenant's cursor is 400 invalid_cursor", async () => {
    const page = await send('GET', '/api/v1/record?limit=1', bearer(a.api_key));
    expect(page.body.next_cursor).toEqual(expect.any(String));
    const r = await send('GET', `/api/v1/record?limit=1&cursor=${encodeURIComponent(page.body.next_cursor)}`, bearer(b.api_key));
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 400, error: 'invalid_cursor' });
  });

  test('a forget job id is 401 without a valid key, and 404 when the tenant has no such job', async () => {
    expectUnauthorized(await send('GET', '/api/v1/forget/01900000-0000-7000-8000-000000000000', null));
    expectUnauthorized(await send('GET', '/api/v1/forget/01900000-0000-7000-8000-000000000000', bearer(`mem_${'A'.repeat(43)}`)));
    const r = await send('GET', '/api/v1/forget/01900000-0000-7000-8000-000000000000', bearer(b.api_key));
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 404, error: 'not_found' });
  });
});

describe('scopes: a key may do what its scopes allow, and gets 403 forbidden naming the scope it lacks', () => {
  /** Every operation, with a request that its scope lets through (the path made for the key's tenant). */
  const operations: { method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; path: (apiKey: string) => Promise<string>; body?: unknown; bodyFor?: (apiKey: string) => Promise<unknown>; scope: Scope }[] = [
    { method: 'POST', path: async () => '/api/v1/record', body: aRecord(), scope: 'write' },
    { method: 'POST', path: async () => '/api/v1/record', bodyFor: supersedingWrite, scope: 'write' },
    { method: 'PATCH', path: (key) => recordOf(key), body: { body: 'Updated.' }, scope: 'write' },
    { method: 'GET', path: async () => '/api/v1/record', scope: 'read' },
    { method: 'GET', path: (key) => recordOf(key), scope: 'read' },
    { method: 'DELETE', path: (key) => recordOf(key), scope: 'delete' },
    { method: 'POST', path: async () => '/api/v1/forget', body: { agent_id: 'nobody', dry_run: true }, scope: 'delete' },
    { method: 'GET', path: async () => '/api/v1/forget/01900000-0000-7000-8000-000000000000', scope: 'delete' },
    { method: 'GET', path: async () => '/api/v1/query?q=dark', scope: 'read' },
    { method: 'GET', path: async () => '/api/v1/usage', scope: 'read' },
    { method: 'POST', path: async () => '/v1/classify', body: { title: 'We chose SQLite', body: 'Decided.' }, scope: 'read' },
    { method: 'POST', path: async () => '/api/v1/classify', body: { title: 'We chose SQLite', body: 'Decided.' }, scope: 'read' },
  ];
  const keyWith: Partial<Record<Scope, string>> = {};
  beforeAll(async () => {
    for (const scope of SCOPES) keyWith[scope] = (await issueKey(svc.backend.keys, svc.tenant.tenant_id, { scopes: [scope] })).api_key;
  });

  test.each(operations.flatMap((op) => SCOPES.map((scope) => [`${op.method} (${op.scope})`, scope, op] as const)))(
    '%s with a key of the %s scope only',
    async (_, scope, op) => {
      // The path names a record of the tenant, made with the full key.
      const r = await send(op.method, await op.path(svc.tenant.api_key), bearer(keyWith[scope]!), op.bodyFor ? await op.bodyFor(svc.tenant.api_key) : op.body);
      if (scope === op.scope) {
        expect(r.status).not.toBe(403);
        expect(r.status).toBeLessThan(500);
      } else {
        expect({ status: r.status, error: r.body.error }).toEqual({ status: 403, error: 'forbidden' });
        expect(r.body.message).toContain(`${op.scope} scope`);
      }
    },
  );

  test('a key made with every scope can do everything; one made before scopes has every scope', async () => {
    const full = await issueKey(svc.backend.keys, svc.tenant.tenant_id, { scopes: [...SCOPES] });
    for (const op of operations) {
      const body = op.bodyFor ? await op.bodyFor(full.api_key) : op.body;
      expect((await send(op.method, await op.path(full.api_key), bearer(full.api_key), body)).status).not.toBe(403);
    }
  });

  test('an expired key answers 401 at once, whatever the authorizer cache holds; one not yet expired works', async () => {
    const soon = new Date(Date.now() + 1500).toISOString();
    const ending = await issueKey(svc.backend.keys, svc.tenant.tenant_id, { expiresAt: soon });
    const later = await issueKey(svc.backend.keys, svc.tenant.tenant_id, { expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await send('GET', '/api/v1/usage', bearer(ending.api_key))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, Date.parse(soon) - Date.now() + 50));
    expectUnauthorized(await send('GET', '/api/v1/usage', bearer(ending.api_key)));
    expect((await send('GET', '/api/v1/usage', bearer(later.api_key))).status).toBe(200);
    const past = await issueKey(svc.backend.keys, svc.tenant.tenant_id, { expiresAt: '2020-01-01T00:00:00.000Z' });
    expectUnauthorized(await send('GET', '/api/v1/usage', bearer(past.api_key)));
  });
});

describe('a key bound to an agent reads, writes and forgets for that agent only', () => {
  let tenant: IssuedKey;
  let bound: string;
  const ids: Record<'mine' | 'theirs', string[]> = { mine: [], theirs: [] };
  const as = (key: string, method: string, path: string, json?: unknown) => send(method, path, bearer(key), json);

  beforeAll(async () => {
    tenant = await svc.newTenant({}, 'bound-agents');
    bound = (await issueKey(svc.backend.keys, tenant.tenant_id, { agentId: 'mine' })).api_key;
    for (const agent of ['mine', 'theirs'] as const) {
      for (let i = 0; i < 2; i++) {
        const r = await as(tenant.api_key, 'POST', '/api/v1/record', aRecord({ agent_id: agent, title: `bound zephyr ${agent} ${i}` }));
        ids[agent].push(r.body.id);
      }
    }
    await svc.backend.settle();
  });

  const forbidden = (r: Reply) => {
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 403, error: 'forbidden' });
    expect(r.body.message).toContain('"mine"');
  };

  test('naming another agent is 403: in a search, a listing, a write and a forget', async () => {
    forbidden(await as(bound, 'GET', '/api/v1/query?q=zephyr&agent_id=theirs'));
    forbidden(await as(bound, 'GET', '/api/v1/record?agent_id=theirs'));
    forbidden(await as(bound, 'POST', '/api/v1/record', aRecord({ agent_id: 'theirs' })));
    forbidden(await as(bound, 'POST', '/api/v1/forget', { agent_id: 'theirs', dry_run: true }));
  });

  test('naming no agent, or its own, is the same as naming its own', async () => {
    const hits = (await as(bound, 'GET', '/api/v1/query?q=zephyr&limit=100')).body.map((h: { id: string }) => h.id);
    expect(hits.sort()).toEqual([...ids.mine].sort());
    expect((await as(bound, 'GET', '/api/v1/query?q=zephyr&agent_id=mine')).body).toHaveLength(2);
    const newest = (await as(bound, 'GET', '/api/v1/query')).body.map((h: { agent_id: string }) => h.agent_id);
    expect(new Set(newest)).toEqual(new Set(['mine']));
    const listed = (await as(bound, 'GET', '/api/v1/record?limit=100')).body.records.map((r: { id: string }) => r.id);
    expect(listed.sort()).toEqual([...ids.mine].sort());
    expect((await as(bound, 'POST', '/api/v1/record', aRecord({ agent_id: 'mine' }))).status).toBe(201);
  });

  test("another agent's record id is 404 to get and to delete, and stays", async () => {
    for (const method of ['GET', 'DELETE']) {
      const r = await as(bound, method, `/api/v1/record/${ids.theirs[0]}`);
      expect({ status: r.status, error: r.body.error }).toEqual({ status: 404, error: 'not_found' });
    }
    expect((await as(tenant.api_key, 'GET', `/api/v1/record/${ids.theirs[0]}`)).status).toBe(200);
    expect((await as(bound, 'GET', `/api/v1/record/${ids.mine[0]}`)).status).toBe(200);
  });

  test("a forget, by selectors or by ids, takes the agent's records only", async () => {
    const byIds = await as(bound, 'POST', '/api/v1/forget', { ids: [...ids.theirs, ids.mine[1]] });
    expect(byIds.body).toEqual({ matched: 1, deleted: 1, dry_run: false });
    const dry = await as(bound, 'POST', '/api/v1/forget', { type: 'fact', dry_run: true });
    expect(dry.body.matched).toBe(2); // ids.mine[0] and the one it wrote above
    for (const id of ids.theirs) expect((await as(tenant.api_key, 'GET', `/api/v1/record/${id}`)).status).toBe(200);
  });
});

describe('a key bound to an agent updates and supersedes records of that agent only', () => {
  let tenant: IssuedKey;
  let bound: string;
  const as = (key: string, method: string, path: string, json?: unknown) => send(method, path, bearer(key), json);
  const write = async (key: string, record: unknown) => {
    const r = await as(key, 'POST', '/api/v1/record', record);
    expect(r.status).toBe(201);
    return r.body.id as string;
  };
  const read = async (id: string) => (await as(tenant.api_key, 'GET', `/api/v1/record/${id}`)).body;

  beforeAll(async () => {
    tenant = await svc.newTenant({}, 'bound-updates');
    bound = (await issueKey(svc.backend.keys, tenant.tenant_id, { agentId: 'mine' })).api_key;
  });

  test("its own record: 200; another agent's: 404 as an unknown one is, and unchanged", async () => {
    const mine = await write(tenant.api_key, aRecord({ agent_id: 'mine' }));
    const theirs = await write(tenant.api_key, aRecord({ agent_id: 'theirs', title: 'Their words' }));
    const ok = await as(bound, 'PATCH', `/api/v1/record/${mine}`, { title: 'Mine, updated' });
    expect({ status: ok.status, title: ok.body.title, agent_id: ok.body.agent_id }).toEqual({ status: 200, title: 'Mine, updated', agent_id: 'mine' });
    for (const ifMatch of [undefined, '"1"', '"2"']) {
      const res = await fetch(`${svc.url}/api/v1/record/${theirs}`, {
        method: 'PATCH',
        headers: { authorization: bearer(bound), 'content-type': 'application/json', ...(ifMatch ? { 'if-match': ifMatch } : {}) },
        body: JSON.stringify({ title: 'Taken over' }),
      });
      // 404 whatever If-Match says: a 412 would tell the key that the record exists.
      expect({ status: res.status, body: await res.json() }).toEqual({ status: 404, body: { error: 'not_found', message: 'No record with this id' } });
    }
    expect(await read(theirs)).toMatchObject({ title: 'Their words', version: 1 });
  });

  test('agent_id in an update is 400 invalid_field, its own agent or another, for a bound key and a tenant key alike', async () => {
    const mine = await write(tenant.api_key, aRecord({ agent_id: 'mine' }));
    for (const [key, agent] of [[bound, 'theirs'], [bound, 'mine'], [tenant.api_key, 'theirs']] as const) {
      const r = await as(key, 'PATCH', `/api/v1/record/${mine}`, { agent_id: agent });
      expect({ status: r.status, error: r.body.error }).toEqual({ status: 400, error: 'invalid_field' });
    }
    expect(await read(mine)).toMatchObject({ agent_id: 'mine', version: 1 });
  });

  test("superseding another agent's record is 404 naming it, and nothing is stored; its own is 201", async () => {
    const mine = await write(tenant.api_key, aRecord({ agent_id: 'mine' }));
    const theirs = await write(tenant.api_key, aRecord({ agent_id: 'theirs' }));
    const listedBefore = (await as(tenant.api_key, 'GET', '/api/v1/record?limit=100&include_superseded=true')).body.records.length;
    const refused = await as(bound, 'POST', '/api/v1/record', aRecord({ agent_id: 'mine', title: 'Never stored', supersedes: [mine, theirs] }));
    expect({ status: refused.status, error: refused.body.error }).toEqual({ status: 404, error: 'not_found' });
    expect(refused.body.message).toContain(theirs);
    expect((await as(tenant.api_key, 'GET', '/api/v1/record?limit=100&include_superseded=true')).body.records).toHaveLength(listedBefore);
    expect([(await read(mine)).superseded_by, (await read(theirs)).superseded_by]).toEqual([null, null]);

    const id = await write(bound, aRecord({ agent_id: 'mine', supersedes: [mine] }));
    expect((await read(mine)).superseded_by).toBe(id);
    // The tenant's own key may supersede any agent's record.
    const byTenant = await write(tenant.api_key, aRecord({ agent_id: 'mine', supersedes: [theirs] }));
    expect((await read(theirs)).superseded_by).toBe(byTenant);
  });
});
