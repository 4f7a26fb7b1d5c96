// Plain JavaScript: Jest loads global setup outside its ESM transform, so this file imports the
// TypeScript launcher through tsx.
import { tsImport } from 'tsx/esm/api';
import { currentBuild } from '../../scripts/dist.mjs';

/**
 * Starts one DynamoDB Local for the whole run and hands its endpoint to the test workers through the
 * environment. Each fixture creates its own tables in it, so suites never share state. Without Java the
 * DynamoDB suites are skipped, and say why.
 */
export default async function globalSetup() {
  // The suites run the programs as users do, compiled (scripts/launch.mjs): build dist/ once here when a
  // source changed, rather than in every child the first suites start at once.
  await currentBuild((line) => process.stderr.write(`\n${line}\n`));
  const { dynamoDbLocalUnavailable, startDynamoDbLocal } = await tsImport('../../local/dynamodb-local.ts', import.meta.url);
  const unavailable = dynamoDbLocalUnavailable();
  if (unavailable) {
    process.env.MEMORY_TEST_DYNAMODB_UNAVAILABLE = unavailable;
    // Jest lists nothing for a suite whose tests are all skipped, so say it here, once, at the top.
    process.stderr.write(`\nSKIPPING the DynamoDB suites and the AWS-shaped e2e run: ${unavailable}.\n\n`);
    return;
  }
  // Shared with global-teardown.js, which runs in the same process.
  globalThis.dynamoDbLocal = await startDynamoDbLocal();
  process.env.MEMORY_TEST_DYNAMODB_ENDPOINT = globalThis.dynamoDbLocal.endpoint;
}
