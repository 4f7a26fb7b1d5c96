import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { launchArguments } from '../../scripts/dist.mjs';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface BenchTenant {
  tenant_id: string;
  api_key: string;
}

/**
 * Creates a tenant with the admin CLI, as an operator would, on a running server's data directory, with
 * quotas and a rate high enough not to shape the measurement.
 */
export async function createTenant(dataDir: string, name: string): Promise<BenchTenant> {
  const limits = ['--record-quota', '1000000000', '--query-quota', '1000000000', '--rate', '1000000', '--burst', '1000000'];
  const { stdout } = await run(process.execPath, [...launchArguments('admin'), 'tenant', 'create', '--name', name, ...limits], {
    cwd: ROOT,
    env: { ...process.env, MEMORY_DATA_DIR: dataDir, LOG_LEVEL: 'ERROR' },
  });
  return JSON.parse(stdout) as BenchTenant;
}
