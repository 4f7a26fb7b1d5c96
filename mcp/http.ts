import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/**
 * MCP over Streamable HTTP at `/mcp`, stateless: every POST gets a fresh McpServer and transport, as in the
 * SDK's stateless example. The tools are plain request and answer, with nothing to push to a client
 * later, so sessions would only add state to keep and lose on a restart.
 */

export interface McpHttpServer {
  /** The endpoint, e.g. `http://127.0.0.1:8788/mcp`. */
  url: string;
  close(): Promise<void>;
}

const LOOPBACK = ['127.0.0.1', 'localhost', '::1'];

function jsonRpcError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/**
 * On a loopback address, only requests whose Host names a loopback host are served: a web page that
 * rebinds its own domain name to 127.0.0.1 (DNS rebinding) must not reach a server that holds an API key.
 * The same rule as the SDK's own `localhostHostValidation`, without express.
 */
function hostAllowed(req: IncomingMessage, listenHost: string): boolean {
  if (!LOOPBACK.includes(listenHost)) return true;
  const header = req.headers.host;
  if (header === undefined) return false;
  try {
    return ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(`http://${header}`).hostname);
  } catch {
    return false;
  }
}

async function handle(req: IncomingMessage, res: ServerResponse, makeServer: () => McpServer, listenHost: string, log: (line: string) => void) {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  if (path !== '/mcp') return jsonRpcError(res, 404, `not found: the MCP endpoint is /mcp`);
  if (!hostAllowed(req, listenHost)) return jsonRpcError(res, 403, `Host ${JSON.stringify(req.headers.host ?? '')} is not allowed`);
  // Stateless: no session to resume with GET or to end with DELETE.
  if (req.method !== 'POST') return jsonRpcError(res, 405, 'method not allowed: this server is stateless and takes POST only', { Allow: 'POST' });

  const server = makeServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(req, res);
  } catch (error) {
    log(`MCP request failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    if (!res.headersSent) jsonRpcError(res, 500, 'internal server error');
    else res.end();
  }
}

/** Serves MCP at `http://host:port/mcp` until `close()`; port 0 picks a free port. */
export async function serveMcpHttp(
  makeServer: () => McpServer,
  { host, port, log }: { host: string; port: number; log: (line: string) => void },
): Promise<McpHttpServer> {
  const http: Server = createServer((req, res) => void handle(req, res, makeServer, host, log));
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}/mcp`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        http.close((error) => (error ? reject(error) : resolve()));
        http.closeAllConnections();
      }),
  };
}
