import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the fake cluster received it. */
export interface Received {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body; for `_bulk`, the parsed NDJSON lines. */
  body: unknown;
}

export interface Reply {
  status: number;
  body: unknown;
  /** Answer only after this long, as a cluster under load would. */
  delayMs?: number;
}

/**
 * A real HTTP server on an ephemeral port that plays an OpenSearch cluster: it records every request
 * and answers whatever the test tells it to.
 */
export class FakeOpenSearch {
  readonly received: Received[] = [];
  reply: (request: Received) => Reply = () => ({ status: 200, body: {} });
  private readonly server: Server;

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://localhost');
        const raw = Buffer.concat(chunks).toString('utf8');
        const body = url.pathname.endsWith('/_bulk')
          ? raw.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as unknown)
          : raw === '' ? undefined : (JSON.parse(raw) as unknown);
        const request: Received = {
          method: req.method ?? '',
          path: url.pathname,
          query: Object.fromEntries(url.searchParams),
          headers: req.headers,
          body,
        };
        this.received.push(request);
        const reply = this.reply(request);
        const answer = () => {
          if (res.destroyed) return;
          res.writeHead(reply.status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(reply.body));
        };
        if (reply.delayMs === undefined) answer();
        else setTimeout(answer, reply.delayMs).unref();
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
