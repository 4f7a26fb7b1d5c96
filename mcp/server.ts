import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ConfigError, createClient, loadApiConfig } from './api.js';
import { MCP_HELP, parseMcpArgs } from './config.js';
import { serveMcpHttp } from './http.js';
import { createMemoryMcpServer } from './tools.js';

/**
 * `npm run --silent mcp`: the MCP server over stdio, or over Streamable HTTP with `--http`. Over stdio,
 * stdout belongs to the protocol, so everything else, this file's messages included, goes to stderr.
 */

const log = (line: string) => process.stderr.write(`${line}\n`);

async function main(): Promise<void> {
  const transport = parseMcpArgs(process.argv.slice(2));
  if (transport === null) {
    log(MCP_HELP);
    return;
  }
  const api = loadApiConfig(process.env);
  const client = createClient(api);
  const makeServer = () => createMemoryMcpServer(client, { apiUrl: api.url });

  if (transport.kind === 'http') {
    const http = await serveMcpHttp(makeServer, { host: transport.host, port: transport.port, log });
    log(`memory MCP server listening on ${http.url} (memory API ${api.url})`);
    const stop = () => void http.close().then(() => process.exit(0));
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    return;
  }

  const server = makeServer();
  await server.connect(new StdioServerTransport());
  log(`memory MCP server on stdio (memory API ${api.url})`);
  // The client closing our stdin is how it says goodbye; nothing else would end the process.
  const stop = () => void server.close().finally(() => process.exit(0));
  process.stdin.once('end', stop);
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    log(`memory MCP server: ${error.message}`);
    process.exit(error.exitCode);
  }
  log(`memory MCP server failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
});
