/** The real server process of the tenants benchmark, started on a data directory it built, and its memory. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { launchArguments } from '../scripts/dist.mjs';
import { residentMiB } from './support/tenant-queries.js';
import { listeningUrl, readStartup } from './support/server.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A server started by startServer. */
export interface Running {
  child: ChildProcess;
  url: string;
  /** From spawn to the line that says it listens. */
  listenMs: number;
  stop(): Promise<void>;
}

/**
 * Starts the local server as bench/support/server.ts does (the same command and settings), but on an
 * existing data directory, which that helper cannot do (it makes a fresh one and deletes it at stop).
 */
export async function startServer(dataDir: string): Promise<Running> {
  const t0 = performance.now();
  const child = spawn(process.execPath, launchArguments('server'), {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', MEMORY_DATA_DIR: dataDir, LOG_LEVEL: 'ERROR', MEMORY_DEFAULT_RATE: '1000000', MEMORY_DEFAULT_BURST: '1000000', MEMORY_DEFAULT_RECORD_QUOTA: '1000000000', MEMORY_DEFAULT_QUERY_QUOTA: '1000000000' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  try {
    const url = await readStartup(child, listeningUrl);
    return { child, url, listenMs: performance.now() - t0, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The server's resident memory now and at its peak, in MiB. */
export function memoryOf(child: ChildProcess) {
  return residentMiB(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
}
