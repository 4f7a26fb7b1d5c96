import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

/** Jest runs the TypeScript sources as native ESM, compiled by SWC. */
const common = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }],
  },
};

/** The HTTP suites that run in-process, and so run a second time on the AWS-shaped backend. */
const HTTP_SUITES = ['smoke', 'health', 'errors', 'route-security', 'search', 'writes', 'hostile-input', 'properties', 'lifecycle', 'usage', 'updates', 'supersedes', 'update-races', 'metrics'].map((name) => `<rootDir>/test/e2e/${name}.test.ts`);

// Without Java there is no DynamoDB Local: the AWS-shaped run is then one skipped test that says so.
const java = spawnSync('java', ['-version'], { stdio: 'ignore' });
const hasJava = !java.error && java.status === 0;

// Most suites spend their time waiting on child processes, sockets and DynamoDB Local rather than on the CPU,
// so two workers run them side by side even on two cores, where Jest's default (cores − 1) would run one.
const maxWorkers = Math.max(2, availableParallelism() - 1);

export default {
  testTimeout: 30000,
  maxWorkers,
  globalSetup: '<rootDir>/test/support/global-setup.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js',
  projects: [
    { ...common, displayName: 'sqlite', testMatch: ['<rootDir>/test/**/*.test.ts'], testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/support/'] },
    {
      ...common,
      displayName: 'aws-shaped',
      testMatch: hasJava ? HTTP_SUITES : ['<rootDir>/test/support/aws-shaped-skipped.test.ts'],
      setupFiles: ['<rootDir>/test/support/aws-shaped-env.js'],
    },
  ],
};
