import { Logger } from '@aws-lambda-powertools/logger';
import { existsSync, rmdirSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createAuthorizerHandler } from '../functions/authorizer/handler.js';
import { createClassifierWorker } from '../functions/classifier/handler.js';
import { createClassifyHandler } from '../functions/classify/handler.js';
import { createForgetHandler } from '../functions/forget/handler.js';
import { createQueryHandler } from '../functions/query/handler.js';
import { createReadHandler } from '../functions/read/handler.js';
import { createHealthHandler } from '../functions/health/handler.js';
import { createUsageHandler } from '../functions/usage/handler.js';
import { createRecordHandler } from '../functions/record/handler.js';
import { openApiJson } from '../shared/api/openapi.js';
import { OPERATIONS, type ApiFunction } from '../shared/api/operations.js';
import { defaultClassifier } from '../shared/classifiers/default.js';
import { openBackend, type Backend } from './backends.js';
import { consoleRoutes } from './console-assets.js';
import type { LocalConfig } from './config.js';
import { createGatewayServer, type ProxyHandler, type Route } from './gateway.js';
import type { ClassificationLoop } from './classification.js';
import { JobLoop } from './job-loop.js';
import { createMetricsServer, ServiceMetrics } from './metrics.js';
import { createTenantWithKey, type IssuedKey } from './tenants.js';

export interface LocalService {
  /** The base URL, e.g. `http://127.0.0.1:8787`. */
  url: string;
  server: Server;
  backend: Backend;
  /** The key of the `default` tenant when this start created it (first start on an empty data directory). */
  firstKey: IssuedKey | null;
  /** The Prometheus metrics' URL, e.g. `http://127.0.0.1:9464/metrics`, with MEMORY_METRICS_PORT; null without, and then nothing more listens. */
  metricsUrl: string | null;
  /** Stops taking requests, lets those in flight finish, stops the job loop and closes the database. */
  close(): Promise<void>;
}

/** `GET /openapi.json`: the OpenAPI document, the same text as docs/openapi.json, built on the first request. */
function openApiHandler(): ProxyHandler {
  let body: string | undefined;
  return async () => ({ statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: (body ??= openApiJson()) });
}

/**
 * Listens on the port, or fails with a message that says what to do (the port is taken, say); `setting` is
 * the variable that chose the port (PORT, or MEMORY_METRICS_PORT), and `host` the one that chose the address.
 */
async function listen(server: Server, port: number, host: string, setting = { port: 'PORT', host: 'HOST', example: 8787 }): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const where = `${bracketed(host)}:${port}`;
    if (code === 'EADDRINUSE') {
      throw new Error(`cannot listen on ${where}: another process uses the port. Stop it, or choose another port, e.g. ${setting.port}=${port < 65535 ? port + 1 : setting.example} npm start`, { cause: error });
    }
    if (code === 'EACCES') throw new Error(`cannot listen on ${where}: permission denied. Choose a port above 1023 (${setting.port}=${setting.example}).`, { cause: error });
    if (code === 'EADDRNOTAVAIL') throw new Error(`cannot listen on ${where}: no such address on this machine. Check ${setting.host}.`, { cause: error });
    throw error;
  }
}

/** A host as a URL names it: an IPv6 address in brackets. */
const bracketed = (host: string) => (host.includes(':') ? `[${host}]` : host);

/** The URL a listening server answers on. */
const urlOf = (server: Server, host: string) => `http://${bracketed(host)}:${(server.address() as AddressInfo).port}`;

/** Closes a server: idle connections at once, those with a request in flight once it is answered or after `graceMs`. */
async function closeServer(server: Server, graceMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const forced = setTimeout(() => server.closeAllConnections(), graceMs);
  await closed;
  clearTimeout(forced);
}

/**
 * What takes back the files a first start made, for a start that fails before the first key is stored
 * (its port taken, say): the embedded database this start created, and the data directory if it made that
 * too and nothing else is in it. So such a start stores nothing, the next start is a first start again,
 * and the admin CLI still finds no database there (no_database; `restore` into it works). Nothing is
 * removed where a database was before.
 */
function newFilesUndo(config: LocalConfig): () => void {
  if (config.aws) return () => undefined;
  const dirExisted = existsSync(config.dataDir);
  if (existsSync(config.databaseFile)) return () => undefined;
  return () => {
    for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(config.databaseFile + suffix, { force: true });
    if (dirExisted) return;
    try {
      rmdirSync(config.dataDir);
    } catch {
      // Something else is in it now: it stays.
    }
  };
}

/**
 * The local composition root: the configured backend (SQLite, or DynamoDB with its stream in the
 * AWS-shaped mode), the same Lambda handlers as on AWS, a gateway that plays API Gateway and the
 * authorizer, and a job loop that plays SQS for the classifier.
 */
export async function startLocalService(config: LocalConfig): Promise<LocalService> {
  const logger = new Logger({ serviceName: 'memory', logLevel: config.logLevel });
  const undoNewFiles = newFilesUndo(config);
  const backend = await openBackend(config, logger);
  const { records, search, keys, usage, jobs } = backend;
  const classifier = defaultClassifier;

  // Each Lambda gets its own logger, as on AWS: injectLambdaContext would otherwise stamp one function's
  // name and request id on every other component's lines.
  const lambdaLogger = () => logger.createChild();
  const handlers: Record<ApiFunction, ProxyHandler> = {
    record: createRecordHandler({ records, logger: lambdaLogger() }),
    read: createReadHandler({ records, cursors: () => backend.cursors, logger: lambdaLogger() }),
    forget: createForgetHandler({ records, logger: lambdaLogger() }),
    query: createQueryHandler({ search, usage, logger: lambdaLogger() }),
    usage: createUsageHandler({ usage, logger: lambdaLogger() }),
    classify: createClassifyHandler({ classifier, logger: lambdaLogger() }),
  };
  // Every operation of the registry, each to its function's handler, as API Gateway routes them on AWS.
  const routes: Route[] = [
    ...OPERATIONS.map(({ method, path, fn }) => ({ method, path, name: fn, handler: handlers[fn] })),
    { method: 'GET', path: '/openapi.json', name: 'openapi', handler: openApiHandler(), public: true },
    // No key, no tenant: whether the database answers (docs/api.md, "Health").
    { method: 'GET', path: '/healthz', name: 'health', handler: createHealthHandler({ records, logger: lambdaLogger() }), public: true },
    ...consoleRoutes(),
  ];
  // The operator's metrics (metrics.ts), on a port of their own, only when MEMORY_METRICS_PORT asks for them.
  const metrics = config.metrics
    ? new ServiceMetrics({ mergeBacklog: () => backend.mergeBacklog(), classificationJobs: () => jobs.counts(), keys, usage }, { logger })
    : null;
  const server = createGatewayServer({
    routes,
    authorizer: createAuthorizerHandler({ keys, logger: lambdaLogger() }),
    logger,
    authCacheMs: config.authCacheMs,
    ...(backend.authGeneration ? { authGeneration: backend.authGeneration } : {}),
    ...(metrics ? { onAnswered: (answer) => metrics.answered(answer) } : {}),
  });
  const metricsServer = metrics ? createMetricsServer(metrics, logger) : null;
  // The classifier Lambda's work: on a thread of its own where the backend allows, else on this one.
  const loop: ClassificationLoop =
    backend.classificationThread?.({ pollMs: config.jobPollMs, logLevel: config.logLevel }, logger) ??
    new JobLoop({ jobs, worker: createClassifierWorker({ records, classifier, logger: lambdaLogger() }), logger, pollMs: config.jobPollMs });

  try {
    await listen(server, config.port, config.host);
  } catch (error) {
    await backend.close();
    undoNewFiles();
    throw error;
  }
  if (metricsServer && config.metrics) {
    try {
      await listen(metricsServer, config.metrics.port, config.metrics.host, { port: 'MEMORY_METRICS_PORT', host: 'MEMORY_METRICS_HOST (or HOST)', example: 9464 });
    } catch (error) {
      await closeServer(server, 0);
      await backend.close();
      undoNewFiles();
      throw error;
    }
  }
  // Only once the port is ours: a first start that cannot listen stores nothing, so the next start is a
  // first start again and prints the key. Requests that arrive before this are refused (no key exists).
  let firstKey: IssuedKey | null;
  try {
    firstKey = (await keys.listTenants()).length === 0 ? await createTenantWithKey(keys, 'default', config.defaultLimits) : null;
  } catch (error) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (metricsServer) await closeServer(metricsServer, 0);
    await backend.close();
    undoNewFiles();
    throw error;
  }
  // A crash can leave jobs leased to the dead process; take them back now rather than after the lease.
  const released = await jobs.releaseClaims();
  if (released > 0) logger.info('released classification jobs leased before a restart', { jobs: released });
  backend.start();
  loop.start();
  const sweep = () => {
    const { purgedIdempotencyKeys } = backend.sweep();
    if (purgedIdempotencyKeys > 0) logger.info('purged expired idempotency keys', { keys: purgedIdempotencyKeys });
  };
  sweep();
  const sweeper = setInterval(sweep, 60 * 60 * 1000).unref();

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      // A scrape reads the database: the metrics stop first, with the requests in flight cut short.
      if (metricsServer) await closeServer(metricsServer, 0);
      await closeServer(server, 10_000);
      clearInterval(sweeper);
      await loop.stop();
      await backend.close();
    })());

  return {
    url: urlOf(server, config.host),
    server,
    backend,
    firstKey,
    metricsUrl: metricsServer && config.metrics ? `${urlOf(metricsServer, config.metrics.host)}/metrics` : null,
    close,
  };
}
