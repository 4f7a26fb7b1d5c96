import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchArguments } from '../../scripts/dist.mjs';

export interface BenchServer {
  url: string;
  /** The server's data directory (its SQLite file is memory.db there). */
  dataDir: string;
  /** The first key of the fresh data directory's default tenant. */
  key: string;
  /** Stops the server and removes its data directory. */
  stop(): Promise<void>;
}

/** The address a server's start-up lines say it listens on, once they have said it. */
export function listeningUrl(out: string): string | undefined {
  return /listening on (http:\/\/\S+)/.exec(out)?.[1];
}

/**
 * Reads a starting server's stdout until `found` makes something of it, and from then on drains it unread,
 * so that reading it costs the load generator nothing; rejects, with what it printed, if the server exits
 * first.
 */
export function readStartup<T>(child: ChildProcess, found: (out: string) => T | undefined): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let out = '';
    const read = (chunk: Buffer) => {
      out += chunk.toString();
      const value = found(out);
      if (value === undefined) return;
      child.stdout!.off('data', read);
      child.stdout!.resume();
      resolve(value);
    };
    child.stdout!.on('data', read);
    child.once('exit', () => reject(new Error(`the server exited before it listened: ${out}`)));
  });
}

/**
 * Starts the local server as `npm start` does, in its own process, on a fresh data directory and a free
 * port, with rate limits and quotas high enough not to shape the measurement. Resolves once it listens.
 */
export async function startBenchServer(env: Record<string, string> = {}): Promise<BenchServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'memory-bench-'));
  const server = spawn(process.execPath, launchArguments('server'), {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    env: { ...process.env, PORT: '0', MEMORY_DATA_DIR: dataDir, LOG_LEVEL: 'ERROR', MEMORY_DEFAULT_RATE: '1000000', MEMORY_DEFAULT_BURST: '1000000', MEMORY_DEFAULT_RECORD_QUOTA: '1000000000', MEMORY_DEFAULT_QUERY_QUOTA: '1000000000', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      server.once('exit', () => {
        rmSync(dataDir, { recursive: true, force: true });
        resolve();
      });
      if (server.exitCode !== null || server.signalCode !== null) server.emit('exit');
      else server.kill('SIGTERM');
    });
  try {
    const { url, key } = await readStartup(server, (out) => {
      const url = listeningUrl(out);
      const key = /(mem_[A-Za-z0-9_-]+)/.exec(out)?.[1];
      return url && key ? { url, key } : undefined;
    });
    return { url, key, dataDir, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
