import type { BuildOptions } from 'esbuild';

/** Every Lambda function, by its folder under functions/; each has a handler.ts and an index.ts entry. */
export const LAMBDA_FUNCTIONS = ['record', 'query', 'classify', 'authorizer', 'indexer', 'classifier'] as const;
export type LambdaFunctionName = (typeof LAMBDA_FUNCTIONS)[number];

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
