/**
 * `GET /healthz` on each backend (docs/api.md, "Health"): no key, no tenant, whether the database answers;
 * HEAD answers the same without a body, and another method 405. (A database that does not answer is
 * tested at the handler and each store's ping: test/unit/health.test.ts, test/ports.)
 */
import { startTestService, type TestService } from '../support/local-service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

test('answers 200 {"status":"ok"} without a key, never cached', async () => {
  const res = await fetch(`${svc.url}/healthz`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(await res.json()).toEqual({ status: 'ok' });
});

test('a key, valid or not, changes nothing: it is not asked for, nor checked', async () => {
  for (const key of [svc.tenant.api_key, 'mem_not_a_key']) {
    const res = await fetch(`${svc.url}/healthz`, { headers: { Authorization: `Bearer ${key}` } });
    expect({ key, status: res.status, body: await res.json() }).toEqual({ key, status: 200, body: { status: 'ok' } });
  }
});

test('HEAD answers the same without a body; another method is 405 with Allow', async () => {
  const head = await fetch(`${svc.url}/healthz`, { method: 'HEAD' });
  expect(head.status).toBe(200);
  expect(await head.text()).toBe('');
  const post = await fetch(`${svc.url}/healthz`, { method: 'POST' });
  expect(post.status).toBe(405);
  expect(post.headers.get('allow')).toBe('GET, HEAD');
  expect(await post.json()).toMatchObject({ error: 'method_not_allowed' });
});
