import { childEnv, removeDir, startServer, tempDir, waitFor, type ServerProcess } from '../support/child-server.js';

/** The memory API as `npm start` runs it, in a child process on a fresh data directory, with its first key. */
export interface RunningApi {
  url: string;
  /** The key the first start printed. */
  key: string;
  server: ServerProcess;
  stop(): Promise<void>;
}

/** Starts the local server as a child process and reads the API key it prints on its first start. */
export async function startApi(): Promise<RunningApi> {
  const dir = tempDir('memory-mcp-');
  const server = await startServer(dir);
  await waitFor(() => /mem_\S+/.test(server.stdout()), 5000, 'the first API key');
  const key = /mem_\S+/.exec(server.stdout())![0];
  return {
    url: server.url,
    key,
    server,
    stop: async () => {
      await server.stop();
      removeDir(dir);
    },
  };
}

/**
 * The environment of an MCP server or CLI child: `childEnv` (no developer MEMORY_* settings) without npm's
 * own variables either, so a test run under `npm test` starts the child as an MCP client would.
 */
export function clientEnv(env: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(childEnv(env))) if (v !== undefined && !k.startsWith('npm_')) out[k] = v;
  return out;
}

/** The text of a tool result's first content block. */
export function textOf(result: object): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content;
  const first = content?.[0];
  if (first?.type !== 'text' || first.text === undefined) throw new Error(`no text content in ${JSON.stringify(result)}`);
  return first.text;
}
