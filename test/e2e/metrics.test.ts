/**
 * The operator's Prometheus metrics (README, "Metrics"), scraped from a running service started with
 * MEMORY_METRICS_PORT: the request counters move by exactly the requests made, under the route's template
 * and never its path; the latency histograms count them; the merge backlog, the classification queue and
 * each tenant's quota use read what the stores hold. It runs on both backends (jest.config.js). The metrics
 * server as a process (the start-up line, nothing listening without the setting, a port taken) is
 * metrics-server.test.ts; failing and hanging reads are test/unit/metrics.test.ts.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { aRecord, Client, eventually, startTestService, type TestService } from '../support/local-service.js';
import { increases, parseExposition, samplesOf, seriesKey, valueOf, type Exposition } from '../support/prometheus-text.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ MEMORY_METRICS_PORT: '0' });
});
afterAll(() => svc.stop());

async function scrape(): Promise<Exposition> {
  const res = await fetch(svc.metricsUrl!);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parseExposition(await res.text());
}

const requests = (route: string, method: string, status: number) => seriesKey('memory_http_requests_total', { route, method, status: String(status) });
const durations = (route: string, method: string) => seriesKey('memory_http_request_duration_seconds_count', { route, method });

test('the metrics are served on a port of their own, on the API\'s host, at /metrics', () => {
  const api = new URL(svc.url);
  const metrics = new URL(svc.metricsUrl!);
  expect(metrics.hostname).toBe(api.hostname);
  expect(metrics.port).not.toBe(api.port);
  expect(metrics.pathname).toBe('/metrics');
});

test('the request counters move by exactly the requests made, by route template, method and status; the histograms count them', async () => {
  const client = svc.client(svc.tenant.api_key);
  const before = await scrape();

  const written = [];
  for (const n of [1, 2, 3]) {
    const res = await client.remember(aRecord({ title: `Metrics record number ${n}`, body: `scraped word quokka${n}` }));
    expect(res.status).toBe(201);
    written.push(res.body.id as string);
  }
  expect((await client.remember({})).status).toBe(400);
  expect((await client.recall({ q: 'metrics record' })).status).toBe(200);
  expect((await client.recall({ q: 'quokka2' })).status).toBe(200);
  expect((await new Client(svc.url, 'mem_not_a_key').request('GET', '/api/v1/query?q=x')).status).toBe(401);
  expect((await client.request('GET', `/api/v1/record/${written[0]}`)).status).toBe(200);
  expect((await client.request('GET', '/api/v1/record/0193d2a0-0000-7000-8000-000000000000')).status).toBe(404);
  expect((await client.request('GET', `/no/such/path/${written[1]}`)).status).toBe(404);
  expect((await fetch(`${svc.url}/healthz`, { method: 'DELETE' })).status).toBe(405);
  expect((await fetch(`${svc.url}/healthz`, { method: 'HEAD' })).status).toBe(200);

  const after = await scrape();
  expect(Object.fromEntries(increases(before, after, 'memory_http_requests_total'))).toEqual({
    [requests('/api/v1/record', 'POST', 201)]: 3,
    [requests('/api/v1/record', 'POST', 400)]: 1,
    [requests('/api/v1/query', 'GET', 200)]: 2,
    [requests('/api/v1/query', 'GET', 401)]: 1,
    [requests('/api/v1/record/{id}', 'GET', 200)]: 1,
    [requests('/api/v1/record/{id}', 'GET', 404)]: 1,
    [requests('unmatched', 'GET', 404)]: 1,
    [requests('/healthz', 'DELETE', 405)]: 1,
    [requests('/healthz', 'HEAD', 200)]: 1,
  });
  expect(Object.fromEntries(increases(before, after, 'memory_http_request_duration_seconds_count'))).toEqual({
    [durations('/api/v1/record', 'POST')]: 4,
    [durations('/api/v1/query', 'GET')]: 3,
    [durations('/api/v1/record/{id}', 'GET')]: 2,
    [durations('unmatched', 'GET')]: 1,
    [durations('/healthz', 'DELETE')]: 1,
    [durations('/healthz', 'HEAD')]: 1,
  });
  // Every histogram: its buckets count up to its count, and its sum is the time its requests took.
  for (const count of samplesOf(after, 'memory_http_request_duration_seconds_count')) {
    const { route, method } = count.labels as { route: string; method: string };
    const buckets = samplesOf(after, 'memory_http_request_duration_seconds_bucket', { route, method });
    const values = buckets.map((b) => b.value);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(buckets.at(-1)).toMatchObject({ labels: { le: '+Inf' }, value: count.value });
    expect(valueOf(after, 'memory_http_request_duration_seconds_sum', { route, method })).toBeGreaterThan(0);
  }
  // The labels name routes, never a request's path: no record id is in the exposition.
  const text = await (await fetch(svc.metricsUrl!)).text();
  for (const id of written) expect(text).not.toContain(id);
});

test("each tenant's quota use is what the stores hold: the records it wrote and the searches it ran this month", async () => {
  const other = await svc.newTenant({ recordQuota: 5, queryQuota: 6 }, 'metered');
  const client = svc.client(other.api_key);
  expect((await client.remember(aRecord())).status).toBe(201);
  expect((await client.remember(aRecord())).status).toBe(201);
  expect((await client.recall({ q: 'dark mode' })).status).toBe(200);

  const exposition = await scrape();
  const quota = (tenant: string, name: 'memory_quota_used' | 'memory_quota_limit') => ({
    records: valueOf(exposition, name, { tenant, quota: 'records' }),
    queries: valueOf(exposition, name, { tenant, quota: 'queries' }),
  });
  expect(quota(other.tenant_id, 'memory_quota_used')).toEqual({ records: 2, queries: 1 });
  expect(quota(other.tenant_id, 'memory_quota_limit')).toEqual({ records: 5, queries: 6 });
  // The suite's own tenant: the three records and two searches of the test above, as GET /usage tells.
  const usage = await svc.client(svc.tenant.api_key).request('GET', '/api/v1/usage');
  expect(quota(svc.tenant.tenant_id, 'memory_quota_used')).toEqual({ records: usage.body.records.used, queries: usage.body.queries.used });
  expect(quota(svc.tenant.tenant_id, 'memory_quota_limit')).toEqual({ records: usage.body.records.quota, queries: usage.body.queries.quota });
  expect(quota(svc.tenant.tenant_id, 'memory_quota_used')).toEqual({ records: 3, queries: 2 });
  const tenants = await svc.backend.keys.listTenants();
  expect(valueOf(exposition, 'memory_tenants')).toBe(tenants.length);
  expect(new Set(samplesOf(exposition, 'memory_quota_limit').map((s) => s.labels.tenant))).toEqual(new Set(tenants.map((t) => t.tenant_id)));
});

test('the merge backlog counts the records not yet merged into the search index, and falls to 0 once they are', async () => {
  const backlog = valueOf(await scrape(), 'memory_search_merge_backlog');
  expect(Number.isInteger(backlog)).toBe(true);
  // Five records were written so far (three, then two); none, some or all of them may wait.
  expect(backlog).toBeGreaterThanOrEqual(0);
  expect(backlog).toBeLessThanOrEqual(5);
  await svc.indexMerged();
  expect(valueOf(await scrape(), 'memory_search_merge_backlog')).toBe(0);
});

test('the classification queue counts the jobs of the writes until the classifier has done them; none is dead', async () => {
  const client = svc.client(svc.tenant.api_key);
  const first = await scrape();
  const ready = valueOf(first, 'memory_classification_jobs', { state: 'ready' })!;
  expect(ready).toBeGreaterThanOrEqual(0);
  expect(ready).toBeLessThanOrEqual(5);
  expect((await client.remember(aRecord())).status).toBe(201);
  // The job loop classifies every few tens of milliseconds: the queue empties, and no job failed for good.
  await eventually(async () => valueOf(await scrape(), 'memory_classification_jobs', { state: 'ready' }) === 0, 10_000);
  expect(valueOf(await scrape(), 'memory_classification_jobs', { state: 'dead' })).toBe(0);
});

test('the process metrics of prom-client are there too', async () => {
  const exposition = await scrape();
  expect(exposition.types.get('process_cpu_user_seconds_total')).toBe('counter');
  expect(valueOf(exposition, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  expect(exposition.types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
});
