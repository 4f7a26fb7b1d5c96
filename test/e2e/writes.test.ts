import { RECORD_TYPES } from '../../shared/domain/record.js';
import { issueKey } from '../../local/tenants.js';
import { aRecord, eventually, startTestService, type Client, type TestService } from '../support/local-service.js';

/**
 * Writes over real HTTP against the local service: the 201 receipt, read-after-write, the record quota
 * under concurrency, idempotency, per-key rate limits, asynchronous classification and key revocation.
 */

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_MS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function freshTenant(limits: Parameters<TestService['newTenant']>[0] = {}) {
  const key = await svc.newTenant(limits);
  return { key, api: svc.client(key.api_key) };
}

async function all(api: Client, params: Record<string, string | number> = {}): Promise<any[]> {
  const res = await api.recall({ limit: 100, ...params });
  expect(res.status).toBe(200);
  return res.body;
}

async function recordsCounted(tenantId: string, month: string): Promise<number> {
  const usage = await svc.backend.usage.list(month, tenantId);
  return usage[0]?.records ?? 0;
}

describe('the 201 answer', () => {
  test('is exactly {id, created_at, tenant_id}, with a UUIDv7, an ISO UTC time and a Location header', async () => {
    const api = svc.client(svc.tenant.api_key);
    const before = Date.now();
    const res = await api.remember(aRecord({ type: 'open_item', title: 'Receipt check', body: 'Follow up.' }));
    const after = Date.now();

    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(['created_at', 'id', 'tenant_id']);
    expect(res.body.id).toMatch(UUID_V7);
    expect(res.body.created_at).toMatch(ISO_MS_UTC);
    const at = Date.parse(res.body.created_at);
    expect(at).toBeGreaterThanOrEqual(before - 1000);
    expect(at).toBeLessThanOrEqual(after + 1000);
    expect(res.body.tenant_id).toBe(svc.tenant.tenant_id);
    expect(res.headers.get('location')).toBe(`/api/v1/record/${res.body.id}`);

    const [stored] = await api.recall({ q: 'receipt' }).then((r) => r.body);
    expect(stored).toMatchObject({ id: res.body.id, type: 'open_item', created_at: res.body.created_at });
  });

  test('the stored type equals the submitted type, for each of the six', async () => {
    const { api } = await freshTenant();
    const written = new Map<string, string>();
    for (const type of RECORD_TYPES) {
      const res = await api.remember(aRecord({ type, title: `Typed record ${type}` }));
      expect(res.status).toBe(201);
      written.set(res.body.id, type);
    }
    const found = await all(api);
    expect(found).toHaveLength(RECORD_TYPES.length);
    for (const r of found) expect(r.type).toBe(written.get(r.id));
  });

  test('ids are time-ordered across writes', async () => {
    const { api } = await freshTenant();
    const first = await api.remember(aRecord());
    await sleep(3);
    const second = await api.remember(aRecord());
    expect(second.body.id > first.body.id).toBe(true);
  });

  test('a record is searchable as soon as its 201 has come back', async () => {
    const { api } = await freshTenant();
    for (let i = 0; i < 5; i++) {
      const word = `quokka${'abcde'[i]}`;
      const res = await api.remember(aRecord({ title: `Fresh record ${word}` }));
      expect(res.status).toBe(201);
      const found = await api.recall({ q: word });
      expect(found.status).toBe(200);
      expect(found.body.map((r: any) => r.id)).toEqual([res.body.id]);
    }
  });
});

describe('record quota under concurrency', () => {
  test('40 concurrent writes against a quota of 10: exactly 10 stored and counted, 30 refused with 507', async () => {
    const { key, api } = await freshTenant({ recordQuota: 10 });
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => api.remember(aRecord({ title: `Concurrent write ${i}` }))),
    );
    const created = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status === 507);
    expect(created).toHaveLength(10);
    expect(refused).toHaveLength(30);
    for (const r of refused) {
      expect(r.body.error).toBe('record_quota_exceeded');
      expect(typeof r.body.message).toBe('string');
    }
    expect(new Set(created.map((r) => r.body.id)).size).toBe(10);

    const found = await all(api);
    expect(found).toHaveLength(10);
    expect(new Set(found.map((r) => r.id))).toEqual(new Set(created.map((r) => r.body.id)));

    const month = created[0]!.body.created_at.slice(0, 7);
    expect(await recordsCounted(key.tenant_id, month)).toBe(10);

    // Still refused afterwards; a refusal never counts.
    const more = await api.remember(aRecord());
    expect(more.status).toBe(507);
    expect(await recordsCounted(key.tenant_id, month)).toBe(10);
  });
});

describe('idempotency', () => {
  test('the same key and body twice answers the same, stores one record and counts once', async () => {
    const { key, api } = await freshTenant();
    const headers = { 'Idempotency-Key': 'retry-1' };
    const record = aRecord({ title: 'Idempotent write' });
    const first = await api.remember(record, headers);
    const second = await api.remember(record, headers);
    expect(first.status).toBe(201);
    expect(second.status).toBe(first.status);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('location')).toBe(first.headers.get('location'));

    expect(await all(api)).toHaveLength(1);
    expect(await recordsCounted(key.tenant_id, first.body.created_at.slice(0, 7))).toBe(1);

    // Another key stores another record.
    const other = await api.remember(record, { 'Idempotency-Key': 'retry-2' });
    expect(other.status).toBe(201);
    expect(other.body.id).not.toBe(first.body.id);
    expect(await all(api)).toHaveLength(2);
  });

  test('10 concurrent identical requests under one key all answer 201 with the same id; one record', async () => {
    const { key, api } = await freshTenant();
    const record = aRecord({ title: 'Concurrent idempotent write' });
    const results = await Promise.all(
      Array.from({ length: 10 }, () => api.remember(record, { 'Idempotency-Key': 'burst-key' })),
    );
    for (const r of results) expect(r.status).toBe(201);
    const idSet = new Set(results.map((r) => r.body.id));
    expect(idSet.size).toBe(1);
    for (const r of results) expect(r.body).toEqual(results[0]!.body);
    expect(await all(api)).toHaveLength(1);
    expect(await recordsCounted(key.tenant_id, results[0]!.body.created_at.slice(0, 7))).toBe(1);
  });

  test('the same key used by two tenants is independent', async () => {
    const one = await freshTenant();
    const two = await freshTenant();
    const record = aRecord({ title: 'Shared key write' });
    const a = await one.api.remember(record, { 'Idempotency-Key': 'shared-key' });
    const b = await two.api.remember(record, { 'Idempotency-Key': 'shared-key' });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body.id).not.toBe(a.body.id);
    expect(a.body.tenant_id).toBe(one.key.tenant_id);
    expect(b.body.tenant_id).toBe(two.key.tenant_id);
    expect((await all(one.api)).map((r) => r.id)).toEqual([a.body.id]);
    expect((await all(two.api)).map((r) => r.id)).toEqual([b.body.id]);

    // The second tenant may even send a different body under the same key.
    const c = await two.api.remember(aRecord({ title: 'Different' }), { 'Idempotency-Key': 'shared-key' });
    expect(c.status).toBe(422);
  });

  test('the same key with a different body answers 422 idempotency_key_reused and stores nothing', async () => {
    const { key, api } = await freshTenant();
    const first = await api.remember(aRecord({ title: 'Original' }), { 'Idempotency-Key': 'reused' });
    expect(first.status).toBe(201);
    const second = await api.remember(aRecord({ title: 'Changed' }), { 'Idempotency-Key': 'reused' });
    expect(second.status).toBe(422);
    expect(second.body.error).toBe('idempotency_key_reused');
    expect(typeof second.body.message).toBe('string');
    expect(await all(api)).toHaveLength(1);
    expect(await recordsCounted(key.tenant_id, first.body.created_at.slice(0, 7))).toBe(1);

    // The original request still replays.
    const replay = await api.remember(aRecord({ title: 'Original' }), { 'Idempotency-Key': 'reused' });
    expect(replay.status).toBe(201);
    expect(replay.body).toEqual(first.body);
  });

  test('key order and white space in the JSON body do not make a different request', async () => {
    const { api } = await freshTenant();
    const headers = { 'Content-Type': 'application/json', 'Idempotency-Key': 'canonical' };
    const compact = '{"agent_id":"a1","type":"fact","title":"Canonical body","body":"Same","metadata":{"x":1,"y":[1,2]}}';
    const reordered = '{\n  "metadata": { "y": [ 1, 2 ], "x": 1 },\n  "body": "Same",\n  "title": "Canonical body",\n  "type": "fact",\n  "agent_id": "a1"\n}';
    const first = await api.request('POST', '/api/v1/record', { rawBody: compact, headers });
    const second = await api.request('POST', '/api/v1/record', { rawBody: reordered, headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(await all(api)).toHaveLength(1);

    // A white space change inside a value is a different request.
    const changed = compact.replace('"Same"', '"Same "');
    const third = await api.request('POST', '/api/v1/record', { rawBody: changed, headers });
    expect(third.status).toBe(422);
    expect(third.body.error).toBe('idempotency_key_reused');
  });
});

describe('rate limits', () => {
  test('rate 0.25, burst 5: five quick requests pass, the sixth gets 429, and one more passes once retry_after has gone by', async () => {
    // A token every 4 s: the bucket stays empty through the 429s below even when a loaded machine takes
    // a second or more over them (at 5/s a token came back within 200 ms, and the write got 201).
    const { api } = await freshTenant({ rate: 0.25, burst: 5 });
    const burst = await Promise.all(Array.from({ length: 5 }, () => api.recall()));
    for (const r of burst) expect(r.status).toBe(200);

    const sixth: { status: number; headers: Headers; body: any } = await api.recall();
    expect(sixth.status).toBe(429);
    expect(sixth.body.error).toBe('rate_limited');
    expect(Number.isInteger(sixth.body.retry_after)).toBe(true);
    expect(sixth.body.retry_after).toBeGreaterThanOrEqual(1);
    expect(sixth.body.retry_after).toBeLessThanOrEqual(4);
    expect(sixth.headers.get('retry-after')).toBe(String(sixth.body.retry_after));

    // Writes share the same bucket.
    const write = await api.remember(aRecord());
    expect(write.status).toBe(429);

    // retry_after is whole seconds rounded up: by then a token is back.
    await sleep(write.body.retry_after * 1000 + 50);
    const later = await api.remember(aRecord());
    expect(later.status).toBe(201);
  });

  test('limits are per key: a second key of the same tenant is not affected by the first key running out', async () => {
    // One token in 1 000 s: nothing refills while the test runs, however slow the machine, so a 429 here
    // can only mean the key's own bucket is empty.
    const { key, api } = await freshTenant({ rate: 0.001, burst: 5 });
    const second = await issueKey(svc.backend.keys, key.tenant_id);
    const other = svc.client(second.api_key);

    const burst = await Promise.all(Array.from({ length: 5 }, () => api.recall()));
    for (const r of burst) expect(r.status).toBe(200);
    expect((await api.recall()).status).toBe(429);

    const fromOther = await Promise.all(Array.from({ length: 5 }, () => other.recall()));
    for (const r of fromOther) expect(r.status).toBe(200);
    expect((await other.recall()).status).toBe(429);
  });
});

describe('classification', () => {
  test('a suggestion appears within seconds while the stored type stays as submitted', async () => {
    const { api } = await freshTenant();
    const res = await api.remember(
      aRecord({ type: 'fact', title: 'We decided to adopt Rust, chosen after review', body: 'The team agreed on it.' }),
    );
    expect(res.status).toBe(201);

    const found = await eventually(async () => {
      const r = await api.recall({ q: 'rust' });
      const hit = r.body?.[0];
      return hit && hit.classification !== null ? hit : undefined;
    }, 5000);

    expect(found.id).toBe(res.body.id);
    expect(found.type).toBe('fact');
    const c = found.classification;
    expect(Object.keys(c).sort()).toEqual(['classified_at', 'confidence', 'model', 'type']);
    expect(RECORD_TYPES).toContain(c.type);
    expect(typeof c.confidence).toBe('number');
    expect(c.confidence).toBeGreaterThanOrEqual(0);
    expect(c.confidence).toBeLessThanOrEqual(1);
    expect(typeof c.model).toBe('string');
    expect(c.model.length).toBeGreaterThan(0);
    expect(c.classified_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    expect(Date.parse(c.classified_at)).toBeGreaterThanOrEqual(Date.parse(res.body.created_at));

    // The no-q search shows the same, and the type is still what was sent.
    const [recent] = await all(api);
    expect(recent.type).toBe('fact');
    expect(recent.classification).toEqual(c);
  });
});

describe('revocation', () => {
  test('a revoked key is refused within 5 seconds even though it was used just before; other keys keep working', async () => {
    const { key, api } = await freshTenant();
    const spare = await issueKey(svc.backend.keys, key.tenant_id);
    expect((await api.recall()).status).toBe(200);
    expect((await api.remember(aRecord())).status).toBe(201);

    const revokedAt = Date.now();
    const revoked = await svc.backend.keys.revoke({ keyId: key.key_id });
    expect(revoked?.status).toBe('revoked');

    const refusal = await eventually(async () => {
      const r: { status: number; body: any } = await api.recall();
      return r.status === 401 ? r : undefined;
    }, 6000);
    const elapsed = Date.now() - revokedAt;
    expect(elapsed).toBeLessThan(5000);
    expect(refusal.body.error).toBe('unauthorized');

    // Refused on every route, and for good.
    expect((await api.remember(aRecord())).status).toBe(401);
    expect((await api.recall()).status).toBe(401);

    const other = svc.client(spare.api_key);
    const found = await other.recall();
    expect(found.status).toBe(200);
    expect(found.body).toHaveLength(1);
  });
});
