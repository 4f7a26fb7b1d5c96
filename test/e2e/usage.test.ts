/**
 * `GET /api/v1/usage` on each backend (decisions.md, "Version 1.1", "Usage"): the caller's month from the
 * counters that enforce the quotas, so it agrees with what the next write or search is told.
 */
import { issueKey } from '../../local/tenants.js';
import { quotaMonth } from '../../shared/domain/quota-month.js';
import { aRecord, startTestService, type TestService } from '../support/local-service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

test('a new tenant has used nothing, and asking counts nothing; the answer is decisions.md\'s object, field for field', async () => {
  const tenant = await svc.newTenant({ recordQuota: 5, queryQuota: 7, rate: 30, burst: 60 });
  const api = svc.client(tenant.api_key);
  const expected = {
    tenant_id: tenant.tenant_id,
    month: quotaMonth(new Date()),
    records: { used: 0, quota: 5, remaining: 5 },
    queries: { used: 0, quota: 7, remaining: 7 },
    rate_limit: { rate: 30, burst: 60 },
  };
  expect((await api.request('GET', '/api/v1/usage')).body).toEqual(expected);
  expect((await api.request('GET', '/api/v1/usage')).body).toEqual(expected);
});

test('it counts what the quotas count, and agrees with the next write and search', async () => {
  const tenant = await svc.newTenant({ recordQuota: 2, queryQuota: 3 });
  const api = svc.client(tenant.api_key);
  for (let i = 0; i < 2; i++) expect((await api.remember(aRecord())).status).toBe(201);
  // A refused write counts nothing, as the quota does not.
  expect((await api.remember(aRecord({ title: 'refused' }))).status).toBe(507);
  for (let i = 0; i < 3; i++) expect((await api.recall({ q: 'dark' })).status).toBe(200);
  const usage = (await api.request('GET', '/api/v1/usage')).body;
  expect(usage.records).toEqual({ used: 2, quota: 2, remaining: 0 });
  expect(usage.queries).toEqual({ used: 3, quota: 3, remaining: 0 });
  // Remaining 0: the next write and search are refused, and counted nowhere.
  expect((await api.remember(aRecord())).body.error).toBe('record_quota_exceeded');
  expect((await api.recall({ q: 'dark' })).body.error).toBe('query_quota_exceeded');
  // Reads by id, listings and deletes count against neither quota.
  await api.request('GET', '/api/v1/record');
  expect((await api.request('GET', '/api/v1/usage')).body).toEqual(usage);
});

test("rate_limit is the calling key's: its own limits, or else the tenant's", async () => {
  const tenant = await svc.newTenant({ rate: 20, burst: 40 });
  const own = await issueKey(svc.backend.keys, tenant.tenant_id, { rate: 5, burst: 9 });
  expect((await svc.client(own.api_key).request('GET', '/api/v1/usage')).body.rate_limit).toEqual({ rate: 5, burst: 9 });
  expect((await svc.client(tenant.api_key).request('GET', '/api/v1/usage')).body.rate_limit).toEqual({ rate: 20, burst: 40 });
});

test("a tenant sees its own usage only", async () => {
  const a = await svc.newTenant();
  const b = await svc.newTenant();
  await svc.client(a.api_key).remember(aRecord());
  const usage = (await svc.client(b.api_key).request('GET', '/api/v1/usage')).body;
  expect(usage.tenant_id).toBe(b.tenant_id);
  expect(usage.records.used).toBe(0);
});

test('with include=key it also says what the calling key may do: its scopes, its agent and its end', async () => {
  const tenant = await svc.newTenant();
  const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
  const bound = await issueKey(svc.backend.keys, tenant.tenant_id, { scopes: ['read', 'delete'], agentId: 'support-bot', expiresAt });
  const api = svc.client(bound.api_key);
  const plain = (await api.request('GET', '/api/v1/usage')).body;
  expect(plain).not.toHaveProperty('key');
  expect((await api.request('GET', '/api/v1/usage?include=key')).body).toEqual({
    ...plain,
    key: { scopes: ['read', 'delete'], agent_id: 'support-bot', expires_at: expiresAt },
  });
  expect((await svc.client(tenant.api_key).request('GET', '/api/v1/usage?include=key')).body.key).toEqual({ scopes: ['read', 'write', 'delete'], agent_id: null, expires_at: null });
  // Other parameters are ignored, as in a search; an include the service does not know is refused.
  expect((await api.request('GET', '/api/v1/usage?verbose=1')).body).toEqual(plain);
  const unknown = await api.request('GET', '/api/v1/usage?include=keys');
  expect({ status: unknown.status, error: unknown.body.error }).toEqual({ status: 400, error: 'invalid_field' });
  expect(unknown.body.message).toContain('include');
});
