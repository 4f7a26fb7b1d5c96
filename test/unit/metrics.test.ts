/**
 * The operator's metrics (local/metrics.ts) on sources that fail or hang: a scrape still answers every
 * other metric, and the gauges that could not be read have no sample at all (not a 0 that would look read).
 * The scrapes of the running server are test/e2e/metrics.test.ts.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { expect, jest, test } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../local/config.js';
import { createMetricsServer, MAX_TENANTS_EXPORTED, ServiceMetrics, UNMATCHED_ROUTE, type MetricsSources } from '../../local/metrics.js';
import type { Tenant, Usage } from '../../shared/domain/tenant.js';
import { parseExposition, samplesOf, valueOf } from '../support/prometheus-text.js';

const logger = new Logger({ logLevel: 'SILENT' });

const tenant = (n: number, recordQuota = 100): Tenant => ({
  tenant_id: `t${String(n).padStart(5, '0')}`,
  name: `tenant ${n}`,
  limits: { recordQuota, queryQuota: 1000, rate: 1, burst: 1 },
  created_at: '2026-01-01T00:00:00.000Z',
});

function sources(overrides: Partial<MetricsSources> = {}, tenants: Tenant[] = [tenant(1)], usage: Usage[] = []): MetricsSources {
  return {
    mergeBacklog: () => 7,
    classificationJobs: () => ({ ready: 2, dead: 1 }),
    keys: { listTenants: async () => tenants },
    usage: { list: async (month: string) => usage.filter((u) => u.month === month) },
    ...overrides,
  };
}

const at = () => new Date('2026-03-15T12:00:00.000Z');

async function scrape(metrics: ServiceMetrics) {
  return parseExposition((await metrics.scrape()).body);
}

test('every gauge reads its source at the scrape: backlog, jobs by state, tenants, quota used and quota limit per tenant', async () => {
  const usage: Usage[] = [
    { tenant_id: 't00001', month: '2026-03', records: 5, queries: 9 },
    { tenant_id: 't00001', month: '2026-02', records: 50, queries: 90 }, // last month's: not this month's use
  ];
  let backlog = 7;
  const metrics = new ServiceMetrics(sources({ mergeBacklog: () => backlog }, [tenant(1), tenant(2, 40)], usage), { logger, clock: at });
  const first = await scrape(metrics);
  expect(valueOf(first, 'memory_search_merge_backlog')).toBe(7);
  expect(valueOf(first, 'memory_classification_jobs', { state: 'ready' })).toBe(2);
  expect(valueOf(first, 'memory_classification_jobs', { state: 'dead' })).toBe(1);
  expect(valueOf(first, 'memory_tenants')).toBe(2);
  expect(samplesOf(first, 'memory_quota_used').map((s) => [s.labels.tenant, s.labels.quota, s.value])).toEqual([
    ['t00001', 'records', 5],
    ['t00001', 'queries', 9],
    ['t00002', 'records', 0],
    ['t00002', 'queries', 0],
  ]);
  expect(samplesOf(first, 'memory_quota_limit').map((s) => [s.labels.tenant, s.labels.quota, s.value])).toEqual([
    ['t00001', 'records', 100],
    ['t00001', 'queries', 1000],
    ['t00002', 'records', 40],
    ['t00002', 'queries', 1000],
  ]);
  backlog = 0;
  expect(valueOf(await scrape(metrics), 'memory_search_merge_backlog')).toBe(0);
});

test('a gauge whose read throws is left out of the scrape, logged, and the rest is answered', async () => {
  const warn = jest.spyOn(logger, 'warn');
  try {
    const metrics = new ServiceMetrics(
      sources({
        mergeBacklog: () => {
          throw new Error('database is locked');
        },
        usage: { list: async () => Promise.reject(new Error('DynamoDB does not answer')) },
      }),
      { logger },
    );
    const { body, contentType } = await metrics.scrape();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const exposition = parseExposition(body);
    // Declared, without a sample: a 0 would say "nothing waits" when nothing could be read.
    expect(exposition.types.get('memory_search_merge_backlog')).toBe('gauge');
    expect(samplesOf(exposition, 'memory_search_merge_backlog')).toEqual([]);
    // The three tenant gauges share the read that failed.
    for (const name of ['memory_tenants', 'memory_quota_used', 'memory_quota_limit']) expect(samplesOf(exposition, name)).toEqual([]);
    expect(valueOf(exposition, 'memory_classification_jobs', { state: 'ready' })).toBe(2);
    expect(samplesOf(exposition, 'process_cpu_user_seconds_total')).toHaveLength(1);
    expect(warn.mock.calls.map(([message, extra]) => [message, (extra as { metrics: string[] }).metrics])).toEqual([
      ['metrics could not be read; this scrape leaves them out', ['memory_search_merge_backlog']],
      ['metrics could not be read; this scrape leaves them out', ['memory_tenants', 'memory_quota_used', 'memory_quota_limit']],
    ]);
  } finally {
    warn.mockRestore();
  }
});

test('a gauge whose read was there and then fails loses its samples: no stale value outlives its source', async () => {
  let failing = false;
  const metrics = new ServiceMetrics(
    sources({
      classificationJobs: () => {
        if (failing) throw new Error('gone');
        return { ready: 4, dead: 0 };
      },
    }),
    { logger },
  );
  expect(valueOf(await scrape(metrics), 'memory_classification_jobs', { state: 'ready' })).toBe(4);
  failing = true;
  expect(samplesOf(await scrape(metrics), 'memory_classification_jobs')).toEqual([]);
});

test('a read that does not answer within its deadline is left out; the scrape does not wait for it', async () => {
  const never = new Promise<Tenant[]>(() => undefined);
  const metrics = new ServiceMetrics(sources({ keys: { listTenants: () => never } }), { logger, readDeadlineMs: 20 });
  const exposition = await scrape(metrics);
  expect(samplesOf(exposition, 'memory_quota_used')).toEqual([]);
  expect(valueOf(exposition, 'memory_search_merge_backlog')).toBe(7);
});

test(`the quotas of the oldest ${MAX_TENANTS_EXPORTED} tenants are exported, and memory_tenants counts them all`, async () => {
  const tenants = Array.from({ length: MAX_TENANTS_EXPORTED + 5 }, (_, i) => tenant(i));
  const exposition = await scrape(new ServiceMetrics(sources({}, tenants), { logger }));
  expect(valueOf(exposition, 'memory_tenants')).toBe(MAX_TENANTS_EXPORTED + 5);
  const exported = new Set(samplesOf(exposition, 'memory_quota_limit').map((s) => s.labels.tenant));
  expect(exported).toEqual(new Set(tenants.slice(0, MAX_TENANTS_EXPORTED).map((t) => t.tenant_id)));
});

test('requests are counted by route template, method and status; a path no route has is one "unmatched" route', async () => {
  const metrics = new ServiceMetrics(sources(), { logger });
  metrics.answered({ route: '/api/v1/record/{id}', method: 'GET', status: 404, seconds: 0.002 });
  metrics.answered({ route: '/api/v1/record/{id}', method: 'GET', status: 404, seconds: 0.003 });
  metrics.answered({ route: null, method: 'GET', status: 404, seconds: 0.0001 });
  const exposition = await scrape(metrics);
  expect(valueOf(exposition, 'memory_http_requests_total', { route: '/api/v1/record/{id}', method: 'GET', status: '404' })).toBe(2);
  expect(valueOf(exposition, 'memory_http_requests_total', { route: UNMATCHED_ROUTE, method: 'GET', status: '404' })).toBe(1);
  expect(valueOf(exposition, 'memory_http_request_duration_seconds_count', { route: '/api/v1/record/{id}', method: 'GET' })).toBe(2);
  expect(valueOf(exposition, 'memory_http_request_duration_seconds_sum', { route: '/api/v1/record/{id}', method: 'GET' })).toBeCloseTo(0.005, 9);
  expect(valueOf(exposition, 'memory_http_request_duration_seconds_bucket', { route: '/api/v1/record/{id}', method: 'GET', le: '0.0025' })).toBe(1);
  expect(valueOf(exposition, 'memory_http_request_duration_seconds_bucket', { route: '/api/v1/record/{id}', method: 'GET', le: '+Inf' })).toBe(2);
});

test('two services in one process keep their counts apart: each has its own registry', async () => {
  const one = new ServiceMetrics(sources(), { logger });
  const two = new ServiceMetrics(sources(), { logger });
  one.answered({ route: '/healthz', method: 'GET', status: 200, seconds: 0.001 });
  expect(valueOf(await scrape(one), 'memory_http_requests_total', { route: '/healthz', method: 'GET', status: '200' })).toBe(1);
  expect(samplesOf(await scrape(two), 'memory_http_requests_total')).toEqual([]);
});

test('the metrics server answers GET and HEAD /metrics only: another path is a 404, another method a 405, as JSON', async () => {
  const server = createMetricsServer(new ServiceMetrics(sources(), { logger }), logger);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const ok = await fetch(`${base}/metrics`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(valueOf(parseExposition(await ok.text()), 'memory_search_merge_backlog')).toBe(7);
    const head = await fetch(`${base}/metrics`, { method: 'HEAD' });
    expect([head.status, await head.text()]).toEqual([200, '']);
    const query = await fetch(`${base}/metrics?name=x`);
    expect(query.status).toBe(200);
    for (const path of ['/', '/metrics/', '/api/v1/query', '/healthz']) {
      const res = await fetch(base + path);
      expect({ path, status: res.status, type: res.headers.get('content-type'), body: await res.json() }).toEqual({
        path,
        status: 404,
        type: 'application/json',
        body: { error: 'not_found', message: `No route for ${path}: the metrics are at GET /metrics` },
      });
    }
    const post = await fetch(`${base}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(await post.json()).toMatchObject({ error: 'method_not_allowed' });
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test('MEMORY_METRICS_PORT turns the metrics on, on HOST unless MEMORY_METRICS_HOST says otherwise; unset or empty, they are off', () => {
  expect(loadConfig({}).metrics).toBeNull();
  expect(loadConfig({ MEMORY_METRICS_PORT: '' }).metrics).toBeNull();
  expect(loadConfig({ MEMORY_METRICS_PORT: '9464' }).metrics).toEqual({ port: 9464, host: '127.0.0.1' });
  expect(loadConfig({ MEMORY_METRICS_PORT: '0', HOST: '0.0.0.0' }).metrics).toEqual({ port: 0, host: '0.0.0.0' });
  expect(loadConfig({ MEMORY_METRICS_PORT: '9464', HOST: '0.0.0.0', MEMORY_METRICS_HOST: '127.0.0.1' }).metrics).toEqual({ port: 9464, host: '127.0.0.1' });
  // Both on a free port of their own.
  expect(loadConfig({ PORT: '0', MEMORY_METRICS_PORT: '0' }).metrics).toEqual({ port: 0, host: '127.0.0.1' });
});

test.each([
  [{ MEMORY_METRICS_PORT: 'prometheus' }, /^invalid configuration: MEMORY_METRICS_PORT: /],
  [{ MEMORY_METRICS_PORT: '65536' }, /^invalid configuration: MEMORY_METRICS_PORT: /],
  [{ MEMORY_METRICS_PORT: '-1' }, /^invalid configuration: MEMORY_METRICS_PORT: /],
  [{ MEMORY_METRICS_PORT: '9464', MEMORY_METRICS_HOST: '' }, /^invalid configuration: MEMORY_METRICS_HOST: /],
  [{ PORT: '9000', MEMORY_METRICS_PORT: '9000' }, "invalid configuration: MEMORY_METRICS_PORT: the metrics need a port of their own, not the API's PORT (9000); e.g. MEMORY_METRICS_PORT=9464"],
])('%j is refused with a message naming the setting', (env, message) => {
  expect(() => loadConfig(env)).toThrow(message);
});
