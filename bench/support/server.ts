import { spawn } from 'node:child_process';
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
    const { url, key } = await new Promise<{ url: string; key: string }>((resolve, reject) => {
      let out = '';
      const read = (chunk: Buffer) => {
        out += chunk.toString();
        const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
        const key = /(mem_[A-Za-z0-9_-]+)/.exec(out)?.[1];
        if (url && key) {
          // From here on the server's stdout (its metrics lines) is drained unread, so that reading it costs
          // the load generator nothing.
          server.stdout!.off('data', read);
          server.stdout!.resume();
          resolve({ url, key });
        }
      };
      server.stdout!.on('data', read);
      server.once('exit', () => reject(new Error('the server exited before it listened')));
    });
    return { url, key, dataDir, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
