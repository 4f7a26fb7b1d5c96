/** The steps of a start that read the database, and the admin CLI's tenant create, timed on a built directory. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { launchArguments } from '../scripts/dist.mjs';
import { openSqliteAdapters } from '../shared/adapters/local/index.js';
import { median } from './support/stats.js';
import type { Built } from './tenants-build.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * The steps of the server's start that read the database (local/app.ts, local/backends.ts), timed in this
 * process, median of 5: opening and migrating, the "is this a first start" check (which lists every
 * tenant), releasing leased jobs and the idempotency sweep.
 */
export async function startSteps(built: Built): Promise<Record<string, number>> {
  const times: Record<string, number[]> = { open: [], listTenants: [], releaseClaims: [], sweep: [] };
  for (let i = 0; i < 5; i++) {
    let t = performance.now();
    const lap = (name: string) => {
      const now = performance.now();
      times[name]!.push(now - t);
      t = now;
    };
    const adapters = openSqliteAdapters(join(built.dir, 'memory.db'), { mustExist: true });
    lap('open');
    if ((await adapters.keys.listTenants()).length !== built.tenants.length) throw new Error('listTenants did not list every tenant');
    lap('listTenants');
    await adapters.jobs.releaseClaims();
    lap('releaseClaims');
    adapters.records.purgeExpiredIdempotencyKeys();
    lap('sweep');
    adapters.close();
  }
  return Object.fromEntries(Object.entries(times).map(([k, v]) => [k, Math.round(median(v) * 100) / 100]));
}

const run = promisify(execFile);

/** `admin tenant create` as an operator runs it (a CLI process), median of 3: it lists every tenant to check the name. */
export async function adminCreateMs(built: Built, tag: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    await run(process.execPath, [...launchArguments('admin'), 'tenant', 'create', '--name', `admin-probe-${tag}-${i}`], {
      cwd: ROOT,
      env: { ...process.env, MEMORY_DATA_DIR: built.dir, LOG_LEVEL: 'ERROR' },
    });
    times.push(performance.now() - t);
  }
  return median(times);
}
