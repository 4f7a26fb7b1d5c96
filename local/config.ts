import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { z } from 'zod';
import { parseEnv } from '../shared/env.js';
import { loadAwsConfig, type AwsConfig } from '../shared/adapters/aws/config.js';
import { LIMITS } from '../shared/domain/record.js';
import { BLOCK_CACHE_BYTES } from '../shared/adapters/local/search-index.js';
import type { Limits } from '../shared/domain/tenant.js';

const positiveInt = z.coerce.number().int().positive();

/**
 * Every setting of the local runtime and the admin CLI, read from the environment once. docs/api.md and
 * the README list them; the defaults are what a laptop needs.
 */
const configSchema = z.object({
  MEMORY_BACKEND: z.enum(['sqlite', 'dynamodb']).default('sqlite'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  HOST: z.string().min(1).default('127.0.0.1'),
  // Unset (or empty): no metrics server. 0 picks a free port, as PORT=0 does.
  MEMORY_METRICS_PORT: z.union([z.literal(''), z.coerce.number().int().min(0).max(65535)]).optional(),
  MEMORY_METRICS_HOST: z.string().min(1).optional(),
  MEMORY_DATA_DIR: z.string().min(1).default('./.memory'),
  MEMORY_DEFAULT_RECORD_QUOTA: z.coerce.number().int().nonnegative().default(100_000),
  MEMORY_DEFAULT_QUERY_QUOTA: z.coerce.number().int().nonnegative().default(1_000_000),
  MEMORY_DEFAULT_RATE: z.coerce.number().positive().default(20),
  MEMORY_DEFAULT_BURST: positiveInt.default(40),
  MEMORY_AUTH_CACHE_SECONDS: z.coerce.number().min(0).max(4).default(2),
  MEMORY_JOB_POLL_MS: positiveInt.default(250),
  MEMORY_SEARCH_THREADS: z.coerce.number().int().min(0).max(64).default(Math.min(4, availableParallelism())),
  // Below the 30 s the local Lambda context grants, so a search always fails on its own terms first.
  MEMORY_SEARCH_TIMEOUT_MS: z.coerce.number().int().min(100).max(25_000).default(LIMITS.searchTimeoutMs),
  MEMORY_SEARCH_QUEUE: z.coerce.number().int().min(0).max(100_000).default(256),
  MEMORY_SEARCH_CACHE_MB: z.coerce.number().int().min(0).max(65_536).default(BLOCK_CACHE_BYTES / 2 ** 20),
  LOG_LEVEL: z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT', 'CRITICAL', 'TRACE']).default('INFO'),
});

export interface LocalConfig {
  /**
   * The DynamoDB settings (endpoint, region, table names) when MEMORY_BACKEND is `dynamodb`, the AWS-shaped
   * mode of local/backends.ts; null for the default, everything in one SQLite file.
   */
  aws: AwsConfig | null;
  port: number;
  host: string;
  /**
   * Where the Prometheus metrics are served (local/metrics.ts), on a port of their own: null without
   * MEMORY_METRICS_PORT, and then nothing more listens. The host is HOST unless MEMORY_METRICS_HOST is set.
   */
  metrics: { port: number; host: string } | null;
  dataDir: string;
  /** The one database file under the data directory. */
  databaseFile: string;
  defaultLimits: Limits;
  authCacheMs: number;
  jobPollMs: number;
  /** Worker threads that run the SQLite searches; 0 runs them on the server's own thread. */
  searchThreads: number;
  /** How long a search on the threads may take, waiting included, before it answers 503 search_timeout. */
  searchTimeoutMs: number;
  /** Searches that may wait for a search thread; one more answers 503 overloaded. */
  searchQueue: number;
  /** What each search connection keeps of the index's blocks between searches, in bytes (0: nothing). */
  searchCacheBytes: number;
  logLevel: z.output<typeof configSchema>['LOG_LEVEL'];
}

/** Reads and validates the configuration; throws with every problem listed. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): LocalConfig {
  const c = parseEnv(configSchema, env);
  const dataDir = resolve(c.MEMORY_DATA_DIR);
  const metricsPort = c.MEMORY_METRICS_PORT === undefined || c.MEMORY_METRICS_PORT === '' ? null : c.MEMORY_METRICS_PORT;
  const metricsHost = c.MEMORY_METRICS_HOST ?? c.HOST;
  if (metricsPort !== null && metricsPort !== 0 && metricsPort === c.PORT && metricsHost === c.HOST) {
    throw new Error(`invalid configuration: MEMORY_METRICS_PORT: the metrics need a port of their own, not the API's PORT (${c.PORT}); e.g. MEMORY_METRICS_PORT=9464`);
  }
  return {
    aws: c.MEMORY_BACKEND === 'dynamodb' ? loadAwsConfig(env) : null,
    port: c.PORT,
    host: c.HOST,
    metrics: metricsPort === null ? null : { port: metricsPort, host: metricsHost },
    dataDir,
    databaseFile: resolve(dataDir, 'memory.db'),
    defaultLimits: {
      recordQuota: c.MEMORY_DEFAULT_RECORD_QUOTA,
      queryQuota: c.MEMORY_DEFAULT_QUERY_QUOTA,
      rate: c.MEMORY_DEFAULT_RATE,
      burst: c.MEMORY_DEFAULT_BURST,
    },
    authCacheMs: c.MEMORY_AUTH_CACHE_SECONDS * 1000,
    jobPollMs: c.MEMORY_JOB_POLL_MS,
    searchThreads: c.MEMORY_SEARCH_THREADS,
    searchTimeoutMs: c.MEMORY_SEARCH_TIMEOUT_MS,
    searchQueue: c.MEMORY_SEARCH_QUEUE,
    searchCacheBytes: c.MEMORY_SEARCH_CACHE_MB * 2 ** 20,
    logLevel: c.LOG_LEVEL,
  };
}
