import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { LAMBDA_ESBUILD, LOCAL_ONLY, MAX_BUNDLE_BYTES, SERVICE_FUNCTIONS, SETUP_FUNCTIONS } from '../../infra/lambda-bundling.js';

/** The settings the stack gives every function (no call is made: the entries only wire their clients). */
const LAMBDA_ENV = {
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
  OPENSEARCH_ENDPOINT: 'https://search-memory.eu-west-1.es.amazonaws.com',
  CLASSIFICATION_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/memory-classification',
  FORGET_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/memory-forget',
  FORGET_MAX_RECEIVES: '3',
  MEMORY_CURSOR_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:memory-cursor-key-AbCdEf',
};

/** Imports a bundle in a fresh node with only `env` (and PATH), as a cold start does; throws what the import throws. */
function coldStart(outfile: string, env: Record<string, string | undefined>): string {
  return execFileSync(process.execPath, ['--input-type=module', '-e', `await import(${JSON.stringify(outfile)});`], {
    env: { PATH: process.env.PATH, ...env },
    encoding: 'utf8',
    stdio: 'pipe',
  });
}

describe('Lambda bundles', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memory-bundles-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const sizes: Record<string, number> = {};
  afterAll(() => console.log(`Lambda bundle sizes (bytes, minified, without source maps): ${JSON.stringify(sizes)}`));

  test.each([...SERVICE_FUNCTIONS, ...SETUP_FUNCTIONS])('%s bundles without local-only code, under the size limit, and loads in a fresh Node process', async (name) => {
    const outfile = join(dir, name, 'index.mjs');
    const result = await build({ ...LAMBDA_ESBUILD, entryPoints: [`functions/${name}/index.ts`], outfile, metafile: true });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs).toContain(`functions/${name}/handler.ts`);
    for (const pattern of LOCAL_ONLY) expect(inputs.filter((input) => pattern.test(input))).toEqual([]);
    sizes[name] = statSync(outfile).size;
    expect(sizes[name]).toBeLessThan(MAX_BUNDLE_BYTES);

    const kind = execFileSync(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(outfile)}); console.log(typeof m.handler);`], {
      env: { PATH: process.env.PATH, ...LAMBDA_ENV },
      encoding: 'utf8',
    });
    expect(kind.trim()).toBe('function');
  });

  test('an entry missing a setting it needs fails at cold start and names it', async () => {
    const outfile = join(dir, 'query-missing', 'index.mjs');
    await build({ ...LAMBDA_ESBUILD, entryPoints: ['functions/query/index.ts'], outfile });
    const { OPENSEARCH_ENDPOINT: _omitted, ...env } = LAMBDA_ENV;
    expect(() => coldStart(outfile, env)).toThrow(/OPENSEARCH_ENDPOINT is required/);
  });

  test('the forget entry needs its queue: without FORGET_QUEUE_URL it fails at cold start and names it', async () => {
    const outfile = join(dir, 'forget-missing', 'index.mjs');
    await build({ ...LAMBDA_ESBUILD, entryPoints: ['functions/forget/index.ts'], outfile });
    const { FORGET_QUEUE_URL: _omitted, ...env } = LAMBDA_ENV;
    expect(() => coldStart(outfile, env)).toThrow(/FORGET_QUEUE_URL is required/);
  });

  test('the read entry needs its cursor secret: without MEMORY_CURSOR_SECRET_ARN it fails at cold start and names it; its bundle has the Secrets Manager client and no other parameter store', async () => {
    const outfile = join(dir, 'read-missing', 'index.mjs');
    const result = await build({ ...LAMBDA_ESBUILD, entryPoints: ['functions/read/index.ts'], outfile, metafile: true });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((input) => input.includes('@aws-sdk/client-secrets-manager/'))).toBe(true);
    expect(inputs.filter((input) => /@aws-sdk\/client-(ssm|appconfigdata)\//.test(input))).toEqual([]);
    const { MEMORY_CURSOR_SECRET_ARN: _omitted, ...env } = LAMBDA_ENV;
    expect(() => coldStart(outfile, env)).toThrow(/MEMORY_CURSOR_SECRET_ARN is required/);
  });

  test('the usage entry reads DynamoDB only: no OpenSearch, SQS or Bedrock client in its bundle, and it loads without their settings', async () => {
    const outfile = join(dir, 'usage-dynamodb-only', 'index.mjs');
    const result = await build({ ...LAMBDA_ESBUILD, entryPoints: ['functions/usage/index.ts'], outfile, metafile: true });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((input) => input.includes('@aws-sdk/client-dynamodb/'))).toBe(true);
    expect(inputs.filter((input) => /@opensearch-project|@aws-sdk\/client-(sqs|bedrock)/.test(input))).toEqual([]);
    const { OPENSEARCH_ENDPOINT: _search, CLASSIFICATION_QUEUE_URL: _classification, FORGET_QUEUE_URL: _forget, ...env } = LAMBDA_ENV;
    const kind = execFileSync(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(outfile)}); console.log(typeof m.handler);`], {
      env: { PATH: process.env.PATH, ...env },
      encoding: 'utf8',
    });
    expect(kind.trim()).toBe('function');
  });

  test('the classifier entry loads with the Bedrock settings the stack sets, and refuses half of them at cold start', async () => {
    const outfile = join(dir, 'classifier-bedrock', 'index.mjs');
    await build({ ...LAMBDA_ESBUILD, entryPoints: ['functions/classifier/index.ts'], outfile });
    const load = (extra: Record<string, string>) =>
      execFileSync(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(outfile)}); console.log(typeof m.handler);`], {
        env: { PATH: process.env.PATH, ...LAMBDA_ENV, ...extra },
        encoding: 'utf8',
        stdio: 'pipe',
      });
    const bedrock = { MEMORY_CLASSIFIER: 'bedrock', BEDROCK_MODEL_ID: 'us.anthropic.claude-3-haiku-20240307-v1:0', BEDROCK_TIMEOUT_MS: '3000' };
    expect(load(bedrock).trim()).toBe('function');
    expect(() => load({ MEMORY_CLASSIFIER: 'bedrock' })).toThrow(/MEMORY_CLASSIFIER=bedrock needs BEDROCK_MODEL_ID/);
  });
});
