/** Finds PostgreSQL 15's server binaries, and installs them with apt-get where they are missing and it may. */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { run } from './run-command.js';

const PG_MAJOR = 15;
const DEFAULT_BIN_DIR = `/usr/lib/postgresql/${PG_MAJOR}/bin`;
const REQUIRED_BINARIES = ['initdb', 'pg_ctl', 'postgres'];

/** Where PostgreSQL 15's binaries should be: Debian's place, or $PG15_BIN_DIR. */
function binDirCandidate(): string {
  return process.env.PG15_BIN_DIR ?? DEFAULT_BIN_DIR;
}

/** The PostgreSQL 15 bin directory if its server binaries are installed, else null. Never installs. */
export function findPostgresBinDir(): string | null {
  const dir = binDirCandidate();
  try {
    for (const name of REQUIRED_BINARIES) accessSync(join(dir, name), constants.X_OK);
    return dir;
  } catch {
    return null;
  }
}

/**
 * Finds the PostgreSQL 15 bin directory; if it is missing, installs Debian's `postgresql-15` with
 * apt-get (after `apt-get update`), logging its output. Throws a clear error if it cannot.
 */
export async function ensurePostgres(log: (line: string) => void): Promise<string> {
  const found = findPostgresBinDir();
  if (found) return found;
  const why = `PostgreSQL ${PG_MAJOR} is not installed (no ${REQUIRED_BINARIES.join(', ')} in ${binDirCandidate()})`;
  if (process.getuid?.() !== 0) throw new Error(`${why}, and installing it needs root: run \`apt-get install postgresql-${PG_MAJOR}\` first.`);
  if (spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status !== 0) {
    throw new Error(`${why}, and there is no apt-get to install it with: install PostgreSQL ${PG_MAJOR} by hand.`);
  }
  log(`${why}; installing postgresql-${PG_MAJOR} from Debian's packages`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    await run('apt-get', ['update'], { env, onLine: (line) => log(`apt-get update: ${line}`) });
    // --no-upgrade: never change an installed package's version behind the user's back.
    await run('apt-get', ['install', '-y', '--no-install-recommends', '--no-upgrade', `postgresql-${PG_MAJOR}`], {
      env,
      onLine: (line) => log(`apt-get install: ${line}`),
    });
  } catch (error) {
    throw new Error(`could not install postgresql-${PG_MAJOR}: ${(error as Error).message}`);
  }
  const installed = findPostgresBinDir();
  if (!installed) throw new Error(`apt-get installed postgresql-${PG_MAJOR}, but its binaries are still not in ${binDirCandidate()}`);
  log(`installed PostgreSQL ${PG_MAJOR} in ${installed}`);
  return installed;
}
