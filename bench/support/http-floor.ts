import { fork } from 'node:child_process';
import { once } from 'node:events';

/**
 * The HTTP floor: what the benchmark's searches over HTTP cost with no service behind them. A bare
 * node:http server in its own process, as the service runs in its own, answers each request with the body
 * the service gave it, byte for byte; the load generator sends the same requests at the same
 * concurrencies. What remains of a search's time over HTTP is the transport on this machine, beside this
 * load generator: a floor no work in the service can go below. PostgreSQL is measured on its own wire
 * protocol, with no HTTP, so where its p50 is under the floor, no service behind HTTP can match it.
 */
export interface HttpFloor {
  url: string;
  stop(): Promise<void>;
}

/** The key of a request in `answers`: its API key and its path with the query string. */
export const floorKey = (apiKey: string, path: string) => `Bearer ${apiKey} ${path}`;

/** Starts the floor's server with the answers to give, keyed by floorKey; resolves once it listens. */
export async function startHttpFloor(answers: ReadonlyMap<string, string>): Promise<HttpFloor> {
  const child = fork(new URL('./http-floor-server.mjs', import.meta.url), [], { execArgv: [], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  child.send([...answers]);
  const [port] = (await Promise.race([once(child, 'message'), once(child, 'exit').then(() => Promise.reject(new Error('the HTTP floor server exited before it listened')))])) as [number];
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      const exited = once(child, 'exit');
      child.disconnect();
      await exited;
    },
  };
}
