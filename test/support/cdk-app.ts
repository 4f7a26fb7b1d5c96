import { afterAll } from '@jest/globals';
import { App, type AppProps } from 'aws-cdk-lib';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const outdirs: string[] = [];

/**
 * A CDK app for a test, synthesized into a directory of its own that is removed after the test file. A
 * plain `new App()` synthesizes into a fresh `cdk.out…` directory under the system's temp directory and
 * leaves it there: about 4.5 MB a `npm test`.
 */
export function testApp(props: AppProps = {}): App {
  const outdir = mkdtempSync(join(tmpdir(), 'memory-cdk-'));
  outdirs.push(outdir);
  return new App({ ...props, outdir });
}

afterAll(() => {
  for (const dir of outdirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
