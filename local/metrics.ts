import type { Logger } from '@aws-lambda-powertools/logger';
import { createServer, type Server } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { AppError } from '../shared/domain/errors.js';
import { quotaMonth } from '../shared/domain/quota-month.js';
import { errorResult } from '../shared/http/responses.js';
import type { KeyStore, UsageMeter } from '../shared/ports.js';
import type { Answered } from './gateway.js';

/**
 * The operator's Prometheus metrics of the local server (README, "Metrics"), served on a port of their own
 * when MEMORY_METRICS_PORT is set: the requests the gateway answered, by route and status, with their
 * latencies; and, read from the stores when Prometheus scrapes, the search index's merge backlog, the
 * classification queue and each tenant's use of its quotas. Each service has its own registry, so that
 * several services in one process (the tests) keep their counts apart.
 */

/** What the gauges read at each scrape. Each read is cheap: a count on an index, or a list of the few tenants. */
export interface MetricsSources {
  /** Records not yet merged into the search index (Backend.mergeBacklog). */
  mergeBacklog(): number;
  /** The classification jobs by state (SqliteJobQueue.counts). */
  classificationJobs(): { ready: number; dead: number };
  keys: Pick<KeyStore, 'listTenants'>;
  usage: Pick<UsageMeter, 'list'>;
}

/** The tenants whose quotas are exported, at most: the oldest ones; `memory_tenants` counts them all. */
export const MAX_TENANTS_EXPORTED = 1000;

/** The latency buckets, in seconds: from half a millisecond (a search of a rare word) to the search timeout. */
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** How long one gauge's read may take before the scrape goes on without it (a DynamoDB table that does not answer). */
const READ_DEADLINE_MS = 2000;

/**
 * The `route` label of a request whose path no route has, or that was refused before routing (414, 431):
 * one value for all of them, so that no request's path becomes a label.
 */
export const UNMATCHED_ROUTE = 'unmatched';

const QUOTAS = ['records', 'queries'] as const;

type Sample = { labels: Record<string, string>; value: number };

/** Gauges filled by one read of the stores at each scrape: `read` gives each gauge's samples, in order. */
interface Reading {
  gauges: Gauge[];
  read(): Sample[][] | Promise<Sample[][]>;
}

export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'route' | 'method' | 'status'>;
  private readonly durations: Histogram<'route' | 'method'>;
  private readonly readings: Reading[];
  private readonly names = new Map<Gauge, string>();

  private readonly logger: Logger;
  private readonly readDeadlineMs: number;

  constructor(
    sources: MetricsSources,
    { logger, clock = () => new Date(), readDeadlineMs = READ_DEADLINE_MS }: { logger: Logger; clock?: () => Date; readDeadlineMs?: number },
  ) {
    this.logger = logger;
    this.readDeadlineMs = readDeadlineMs;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'memory_http_requests_total',
      help: 'Requests the API answered, by route (the path template), method and status.',
      labelNames: ['route', 'method', 'status'],
      registers,
    });
    this.durations = new Histogram({
      name: 'memory_http_request_duration_seconds',
      help: 'Time from a request to the end of its answer, by route (the path template) and method.',
      labelNames: ['route', 'method'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    const gauge = (name: string, help: string, labelNames: string[] = []) => {
      const made = new Gauge({ name, help, labelNames, registers });
      this.names.set(made, name);
      return made;
    };

    this.readings = [
      {
        gauges: [gauge('memory_search_merge_backlog', 'Records written and not yet merged into the search index; searches read them from its tail.')],
        read: () => [[{ labels: {}, value: sources.mergeBacklog() }]],
      },
      {
        gauges: [gauge('memory_classification_jobs', 'Classification jobs by state: ready (waiting or running) and dead (failed every attempt).', ['state'])],
        read: () => {
          const { ready, dead } = sources.classificationJobs();
          return [[{ labels: { state: 'ready' }, value: ready }, { labels: { state: 'dead' }, value: dead }]];
        },
      },
      {
        gauges: [
          gauge('memory_tenants', `Tenants; the quota gauges cover the oldest ${MAX_TENANTS_EXPORTED} of them.`),
          gauge('memory_quota_used', "This month's use of a tenant's quota: records written, or searches run.", ['tenant', 'quota']),
          gauge('memory_quota_limit', "A tenant's monthly quota: records it may write, or searches it may run.", ['tenant', 'quota']),
        ],
        read: async () => {
          const [tenants, usage] = await Promise.all([sources.keys.listTenants(), sources.usage.list(quotaMonth(clock()))]);
          const used = new Map(usage.map((u) => [u.tenant_id, u]));
          const rows = tenants.slice(0, MAX_TENANTS_EXPORTED).map(({ tenant_id, limits }) => ({
            tenant: tenant_id,
            used: { records: used.get(tenant_id)?.records ?? 0, queries: used.get(tenant_id)?.queries ?? 0 },
            limit: { records: limits.recordQuota, queries: limits.queryQuota },
          }));
          const quotas = (of: 'used' | 'limit') =>
            rows.flatMap((row) => QUOTAS.map((quota) => ({ labels: { tenant: row.tenant, quota }, value: row[of][quota] })));
          return [[{ labels: {}, value: tenants.length }], quotas('used'), quotas('limit')];
        },
      },
    ];
  }

  /** Counts an answer of the gateway (GatewayOptions.onAnswered). */
  answered({ route, method, status, seconds }: Answered): void {
    const routeLabel = route ?? UNMATCHED_ROUTE;
    this.requests.inc({ route: routeLabel, method, status: String(status) });
    this.durations.observe({ route: routeLabel, method }, seconds);
  }

  /** Reads the stores into the gauges, then gives the text exposition of every metric, and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    await Promise.all(this.readings.map((reading) => this.refresh(reading)));
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /**
   * Sets a reading's gauges to what it reads now. A read that fails, or takes longer than `readDeadlineMs`,
   * is logged, and its gauges have no samples in this scrape: the rest of the scrape is answered all the same.
   */
  private async refresh({ gauges, read }: Reading): Promise<void> {
    let samples: Sample[][] = [];
    try {
      samples = await withDeadline(Promise.resolve().then(read), this.readDeadlineMs);
    } catch (error) {
      this.logger.warn('metrics could not be read; this scrape leaves them out', { metrics: gauges.map((g) => this.names.get(g)), error: error as Error });
    }
    gauges.forEach((gauge, i) => {
      // reset() leaves a gauge without labels at 0, which would look like a value read: remove({}) takes it out.
      gauge.reset();
      gauge.remove({});
      for (const { labels, value } of samples[i] ?? []) gauge.set(labels, value);
    });
  }
}

/** The promise, or a rejection once `ms` have passed without its answer. */
function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * The metrics server: `GET /metrics` (and HEAD) answers the text exposition; any other path 404, another
 * method 405, as JSON errors like the API's.
 */
export function createMetricsServer(metrics: ServiceMetrics, logger: Logger): Server {
  return createServer((req, res) => {
    const json = (result: ReturnType<typeof errorResult>) => {
      res.writeHead(result.statusCode, { ...(result.headers as Record<string, string>), 'Content-Length': String(Buffer.byteLength(result.body)) });
      res.end(result.body);
    };
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      json(errorResult(new AppError('not_found', `No route for ${path}: the metrics are at GET /metrics`)));
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const result = errorResult(new AppError('method_not_allowed', `${req.method} is not allowed here; use GET, HEAD`));
      json({ ...result, headers: { ...result.headers, Allow: 'GET, HEAD' } });
      return;
    }
    metrics.scrape().then(
      ({ contentType, body }) => {
        res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(body)), 'Cache-Control': 'no-store' });
        res.end(body);
      },
      (error: unknown) => {
        // Each gauge catches its own failures; this is a failure of the registry itself.
        logger.error('metrics scrape failed', { error: error as Error });
        json({ statusCode: 500, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ error: 'internal_error', message: 'The metrics could not be collected; the server log says why.' }) });
      },
    );
  });
}
