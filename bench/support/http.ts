import { Agent, request } from 'node:http';

/**
 * A lean HTTP client for the load generator: node:http with keep-alive, which costs the client less CPU
 * per request than fetch does. The client shares the machine with the server, so every microsecond it
 * spends is one the server does not get.
 */
export class BenchHttp {
  private readonly agent: Agent;

  constructor(
    private readonly baseUrl: string,
    maxSockets = 64,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets });
  }

  /** Sends one request; resolves with the status and the body text. */
  send(method: 'GET' | 'POST', path: string, apiKey: string, body?: unknown): Promise<{ status: number; text: string }> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        `${this.baseUrl}${path}`,
        {
          method,
          agent: this.agent,
          headers: {
            Authorization: `Bearer ${apiKey}`,
            ...(payload === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
