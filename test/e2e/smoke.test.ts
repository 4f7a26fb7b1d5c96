import { aRecord, startTestService, type TestService } from '../support/local-service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

test('stores a record and finds it again', async () => {
  const api = svc.client(svc.tenant.api_key);
  const created = await api.remember(aRecord());
  expect(created.status).toBe(201);
  const found = await api.recall({ q: 'dark' });
  expect(found.body.map((r) => r.id)).toEqual([created.body.id]);
});
