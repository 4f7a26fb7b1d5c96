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

/** Limits high enough not to shape the measurement. */
const LIMITS = ['--record-quota', '1000000000', '--query-quota', '1000000000', '--rate', '1000000', '--burst', '1000000'];

/** Runs an admin CLI command on the data directory, as an operator would; resolves with its JSON answer. */
async function admin(dataDir: string, args: string[]): Promise<unknown> {
  const { stdout } = await run(process.execPath, [...launchArguments('admin'), ...args], {
    cwd: ROOT,
    env: { ...process.env, MEMORY_DATA_DIR: dataDir, LOG_LEVEL: 'ERROR' },
  });
  return JSON.parse(stdout);
}

/** Creates a tenant with the admin CLI on a running server's data directory, with the limits above. */
export async function createTenant(dataDir: string, name: string): Promise<BenchTenant> {
  return (await admin(dataDir, ['tenant', 'create', '--name', name, ...LIMITS])) as BenchTenant;
}

/** A new key of a tenant that exists, whose limits are first raised to the ones above. */
export async function keyOfTenant(dataDir: string, tenantId: string): Promise<BenchTenant> {
  await admin(dataDir, ['tenant', 'update', '--tenant', tenantId, ...LIMITS]);
  const { api_key } = (await admin(dataDir, ['key', 'create', '--tenant', tenantId, '--rate', '1000000', '--burst', '1000000'])) as { api_key: string };
  return { tenant_id: tenantId, api_key };
}
