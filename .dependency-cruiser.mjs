/**
 * The architecture rules of the house style ("The shape of the house"; the README lists them), checked by
 * `npm run lint:deps` (part of `npm test`) over the product code: everything but test/. There are no exceptions: a change that
 * breaks a rule moves the code, not the rule.
 */

/** Packages that tie code to a platform: the AWS SDK and its helpers, OpenSearch, SQLite, PostgreSQL, middy, CDK. */
const PLATFORM_PACKAGES =
  '^node_modules/(@aws-sdk|@smithy|@aws-lambda-powertools|@opensearch-project|@middy|@types/aws-lambda|@types/better-sqlite3|better-sqlite3|aws-cdk-lib|constructs|pg)/';

/** The runtimes and tools that sit above shared/: nothing in shared/ may reach up into them. */
const ABOVE_SHARED = '^(functions|local|infra|bench|scripts|mcp|cli|sdk|console|test)/';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'An import cycle ties its modules into one: none can be read, tested or replaced alone.',
      severity: 'error',
      from: { pathNot: '^test/' },
      to: { circular: true },
    },
    {
      name: 'domain-imports-only-domain',
      comment: 'shared/domain depends on nothing of the project but the rules of text (shared/text): the record, its schemas and rules stand alone.',
      severity: 'error',
      from: { path: '^shared/domain/' },
      to: { pathNot: '^(shared/domain/|shared/text/|node_modules/)', dependencyTypesNot: ['core'] },
    },
    {
      name: 'domain-uses-no-platform',
      comment: 'shared/domain imports no AWS SDK, no SQLite, no middy: it runs the same on every backend.',
      severity: 'error',
      from: { path: '^shared/domain/' },
      to: { path: PLATFORM_PACKAGES },
    },
    {
      name: 'search-engine-stands-alone',
      comment:
        'shared/search knows terms, document numbers and opaque tenant keys: it imports no adapter, no domain, ' +
        'nothing of the project outside itself but the rules of text (shared/text); its storage comes in through its own interface.',
      severity: 'error',
      from: { path: '^shared/search/' },
      to: { pathNot: '^(shared/search/|shared/text/|node_modules/)', dependencyTypesNot: ['core'] },
    },
    {
      name: 'text-rules-stand-alone',
      comment: 'shared/text holds the rules of text that the domain and the engine share (how text is cut into tokens): it imports nothing.',
      severity: 'error',
      from: { path: '^shared/text/' },
      to: { pathNot: '^(shared/text/|node_modules/)', dependencyTypesNot: ['core'] },
    },
    {
      name: 'search-engine-uses-no-platform',
      comment: 'shared/search reads and writes through its storage interface, never through AWS or SQLite itself.',
      severity: 'error',
      from: { path: '^shared/search/' },
      to: { path: PLATFORM_PACKAGES },
    },
    {
      name: 'search-read-side-not-writer',
      comment: "The engine's read side never imports its write side: what both need (a document's analysis, a query's clauses) has its own module.",
      severity: 'error',
      from: { path: '^shared/search/', pathNot: '^shared/search/writer[.]ts$' },
      to: { path: '^shared/search/writer[.]ts$' },
    },
    {
      name: 'functions-not-local',
      comment: 'A Lambda is wired from shared/ alone; local/ is the local runtime, which plays API Gateway and the loops.',
      severity: 'error',
      from: { path: '^functions/' },
      to: { path: '^local/' },
    },
    {
      name: 'handlers-not-adapters',
      comment: "A handler is built from the ports it is given; only its function's index.ts (the AWS entry) wires adapters.",
      severity: 'error',
      from: { path: '^functions/[^/]+/handler[.]ts$' },
      to: { path: '^shared/adapters/' },
    },
    {
      name: 'adapters-below-runtimes',
      comment: 'An adapter implements the ports for any runtime: it imports no composition root (functions/, local/, infra/) nor any tool.',
      severity: 'error',
      from: { path: '^shared/adapters/' },
      to: { path: ABOVE_SHARED },
    },
    {
      name: 'shared-below-runtimes',
      comment: 'Dependencies point one way: functions/, local/ and infra/ (and the tools and clients) depend on shared/, never the reverse.',
      severity: 'error',
      from: { path: '^shared/', pathNot: '^shared/adapters/' },
      to: { path: ABOVE_SHARED },
    },
    {
      name: 'prometheus-only-in-local',
      comment:
        "prom-client serves the local server's metrics to an operator's Prometheus (local/metrics.ts); on AWS the " +
        'Lambdas publish CloudWatch metrics (shared/http/usage-metrics.ts) and hold no registry a scraper could reach.',
      severity: 'error',
      from: { pathNot: '^(local|test)/' },
      to: { path: '^node_modules/prom-client/' },
    },
    {
      name: 'imports-resolve',
      comment: 'Every import resolves to a file, so that no edge of the graph is missing when the rules above are checked.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // A node_modules linked from elsewhere stays node_modules/…, so packages are never taken for project files.
    preserveSymlinks: true,
    // Type-only imports count: a cycle of types still ties the modules together.
    tsPreCompilationDeps: true,
    // Resolves `./x.js` specifiers to the `./x.ts` files, as TypeScript's NodeNext resolution does.
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
