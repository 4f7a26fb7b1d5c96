import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BenchServer {
  url: string;
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
  const server = spawn(process.execPath, ['--import', 'tsx', 'local/server.ts'], {
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
      server.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
        const key = /(mem_[A-Za-z0-9_-]+)/.exec(out)?.[1];
        if (url && key) resolve({ url, key });
      });
      server.once('exit', () => reject(new Error('the server exited before it listened')));
    });
    return { url, key, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The value at the p-th percentile (0–100) of ascending values, by the nearest-rank method. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** The median of unsorted values. */
export function median(values: number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}
