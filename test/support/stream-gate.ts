import { createServer, request as httpRequest, Agent, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A proxy in front of DynamoDB Local that can hold the table's stream back, so that the AWS-shaped mode's
 * search index falls behind the table for as long as a test wants, as it can on AWS when the event source
 * mapping lags. Everything passes through unchanged, except that while the gate is held a stream
 * `GetRecords` answers "nothing new" with the iterator it was given: the stream poller then reads the same
 * place again on its next pass, and gets the held changes once the gate opens. Nothing of the service is
 * changed or stubbed; only what reaches its stream poller is delayed.
 */
export interface StreamGate {
  /** The endpoint to give the service (DYNAMODB_ENDPOINT) in place of DynamoDB Local's. */
  endpoint: string;
  /** From now on, the stream delivers nothing new (changes stay in it, undelivered). */
  hold(): void;
  /** The stream delivers again, the held changes first. */
  release(): void;
  /** How many GetRecords calls were answered "nothing new" while held: not vacuous when above 0. */
  readonly heldReads: number;
  /**
   * Resolves at the next GetRecords answered "nothing new": from then on the stream poller reads only
   * through the held gate, so no change made after that is delivered until release.
   */
  nextHeldRead(): Promise<void>;
  close(): Promise<void>;
}

const GET_RECORDS = 'DynamoDBStreams_20120810.GetRecords';

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Starts a gate in front of `upstream` (DynamoDB Local's endpoint), open. */
export async function startStreamGate(upstream: string): Promise<StreamGate> {
  const target = new URL(upstream);
  const agent = new Agent({ keepAlive: true });
  let held = false;
  let heldReads = 0;
  let waiting: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await bodyOf(req);
      if (held && req.headers['x-amz-target'] === GET_RECORDS) {
        heldReads++;
        for (const resolve of waiting) resolve();
        waiting = [];
        const { ShardIterator } = JSON.parse(body.toString('utf8')) as { ShardIterator: string };
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(JSON.stringify({ Records: [], NextShardIterator: ShardIterator }));
        return;
      }
      const forwarded = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forwarded.on('error', (error) => res.destroy(error));
      forwarded.end(body);
    })().catch((error: unknown) => res.destroy(error as Error));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    hold: () => {
      held = true;
    },
    release: () => {
      held = false;
    },
    get heldReads() {
      return heldReads;
    },
    nextHeldRead: () => new Promise<void>((resolve) => waiting.push(resolve)),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
