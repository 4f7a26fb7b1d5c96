import { parseArgs } from 'node:util';
import { ConfigError, DEFAULT_API_URL } from './api.js';

const usage = (message: string) => new ConfigError(message, 2);

/** How the MCP server is run: over stdio (the default), or over Streamable HTTP with `--http`. */
export type McpTransportConfig = { kind: 'stdio' } | { kind: 'http'; host: string; port: number };

export const MCP_HELP = `Usage: npm run --silent mcp [-- --http [--port N] [--host H]]

The MCP server of the memory service, with the tools memory_remember, memory_recall, memory_classify,
memory_get, memory_update, memory_list, memory_forget and memory_usage.

  (no option)   serve MCP over stdio: for Claude Desktop, Cursor and other clients that start the server
  --http        serve MCP over Streamable HTTP at http://<host>:<port>/mcp instead (stateless)
  --port N      the HTTP port (default 8788; 0 picks a free one)
  --host H      the HTTP address (default 127.0.0.1; anything else lets other machines use your API key)

Environment:
  MEMORY_API_URL   the memory API (default ${DEFAULT_API_URL}, the local server; or the API Gateway stage URL)
  MEMORY_API_KEY   an API key of the service (mem_…), required

Over stdio, stdout carries nothing but the MCP protocol; messages go to stderr. See docs/mcp.md.`;

/** Parses the MCP server's arguments; throws a ConfigError on an unknown option or a bad port. Null means --help. */
export function parseMcpArgs(argv: string[]): McpTransportConfig | null {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        http: { type: 'boolean' },
        port: { type: 'string' },
        host: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw usage(`${(error as Error).message}\n\n${MCP_HELP}`);
  }
  if (values.help) return null;
  if (!values.http) {
    if (values.port !== undefined || values.host !== undefined) throw usage('--port and --host need --http');
    return { kind: 'stdio' };
  }
  const port = Number(values.port ?? '8788');
  if (!/^\d{1,5}$/.test(values.port ?? '8788') || port > 65535) throw usage('--port must be an integer from 0 to 65535');
  const host = values.host ?? '127.0.0.1';
  if (host.trim() === '') throw usage('--host must not be empty');
  return { kind: 'http', host, port };
}
