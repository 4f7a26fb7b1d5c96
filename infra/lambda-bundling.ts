import type { BuildOptions } from 'esbuild';

/**
 * The functions of the write, search and classification paths, by their folder under functions/; each has a
 * handler.ts and an index.ts entry. The cold-start benchmark (bench/cold-start.ts) measures each of these.
 */
export const LAMBDA_FUNCTIONS = ['record', 'query', 'classify', 'authorizer', 'indexer', 'classifier'] as const;
export type LambdaFunctionName = (typeof LAMBDA_FUNCTIONS)[number];

/**
 * The record lifecycle's functions: the reads (`GET /api/v1/record…`), the deletes and forgets, and the
 * worker of the forget queue. Bundled and deployed like the others; the cold-start benchmark does not
 * measure them yet (it has no warm case for them).
 */
export const LIFECYCLE_FUNCTIONS = ['read', 'forget', 'forget-worker'] as const;
export type LifecycleFunctionName = (typeof LIFECYCLE_FUNCTIONS)[number];

/**
 * The functions that answer about the tenant's account or the service rather than records: `GET
 * /api/v1/usage`, which reads the monthly counters the quotas are enforced on, and `GET /healthz`, which
 * reads nothing of a tenant's. Bundled and deployed like the others; the cold-start benchmark does not
 * measure them.
 */
export const ACCOUNT_FUNCTIONS = ['usage', 'health'] as const;
export type AccountFunctionName = (typeof ACCOUNT_FUNCTIONS)[number];

/** Every Lambda function of the service, as the stack deploys them. */
export const SERVICE_FUNCTIONS = [...LAMBDA_FUNCTIONS, ...LIFECYCLE_FUNCTIONS, ...ACCOUNT_FUNCTIONS] as const;
export type ServiceFunctionName = (typeof SERVICE_FUNCTIONS)[number];

/** Functions that only run at deploy time (custom resources), bundled the same way. */
export const SETUP_FUNCTIONS = ['search-setup'] as const;
export type SetupFunctionName = (typeof SETUP_FUNCTIONS)[number];

/**
 * The largest bundle (minified, without its source map) a function may grow to before the bundle test
 * fails: a cold start loads and parses the whole file, so growth should be a decision, not an accident.
 * docs/deploy.md lists the sizes.
 */
export const MAX_BUNDLE_BYTES = 1_500_000;

/**
 * How a Lambda is bundled, for the CDK stack and for the tests that check the bundles: one minified ESM
 * file for Node 22, with a source map. The AWS SDK is bundled too, at the versions the lockfile pins,
 * rather than taken from the runtime. Some dependencies are CommonJS and call `require`, which an ESM
 * bundle does not have, hence the banner.
 */
export const LAMBDA_ESBUILD: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  minify: true,
  sourcemap: true,
  mainFields: ['module', 'main'],
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  logLevel: 'silent',
};

/** Source paths that must never reach a Lambda bundle: the SQLite adapters, the local runtime, native modules. */
export const LOCAL_ONLY = [/better-sqlite3/, /shared\/adapters\/local\//, /(^|\/)local\//, /\.node$/];
