/**
 * The edges of HTTP itself, on raw sockets against the local gateway: request targets that are not plain
 * paths (`//x/…`, the absolute form), methods that are not routes (CONNECT), a URL or headers too long
 * (414, 431), and a client that hangs up mid-request. Every answer is
 * JSON, and nothing a client does at this level is logged as the service's own error.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAuthorizerHandler } from '../../functions/authorizer/handler.js';
import { createQueryHandler } from '../../functions/query/handler.js';
import { createRecordHandler } from '../../functions/record/handler.js';
import { createGatewayServer } from '../../local/gateway.js';
import { createTenantWithKey } from '../../local/tenants.js';
import { openSqliteAdapters, type SqliteAdapters } from '../../shared/adapters/local/index.js';
import { LIMITS } from '../../shared/domain/record.js';
import { aRecord, eventually, ROOMY } from '../support/local-service.js';

let dir: string;
let adapters: SqliteAdapters;
let server: Server;
let port: number;
let apiKey: string;
/** What the gateway logged, by level. */
const logged: { level: 'info' | 'warn' | 'error'; message: string }[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'memory-edges-'));
  adapters = openSqliteAdapters(join(dir, 'memory.db'));
  apiKey = (await createTenantWithKey(adapters.keys, 'edges', ROOMY)).api_key;
  const logger = new Logger({ serviceName: 'memory', logLevel: 'SILENT' });
  for (const level of ['info', 'warn', 'error'] as const) {
    logger[level] = ((message: string) => {
      logged.push({ level, message });
    }) as Logger['info'];
  }
  server = createGatewayServer({
    routes: [
      { method: 'POST', path: '/api/v1/record', name: 'record', handler: createRecordHandler({ records: adapters.records, logger }) },
      { method: 'GET', path: '/api/v1/query', name: 'query', handler: createQueryHandler({ search: adapters.search, usage: adapters.usage, logger }) },
    ],
    authorizer: createAuthorizerHandler({ keys: adapters.keys, logger }),
    logger,
    authCacheMs: 0,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  adapters.close();
  rmSync(dir, { recursive: true, force: true });
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/** Writes `request` on a new socket and reads the answer until the server closes or the answer is whole. */
function raw(request: string | Buffer, { end = true } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    const finish = () => {
      const text = data.toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`no answer: ${JSON.stringify(text.slice(0, 200))}`));
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      const body = text.slice(split + 4);
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: body === '' ? undefined : JSON.parse(body) });
    };
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const text = data.toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(text.slice(0, split))?.[1];
      if (split >= 0 && length !== undefined && data.length >= Buffer.byteLength(text.slice(0, split + 4)) + Number(length)) {
        socket.destroy();
        finish();
      }
    });
    socket.on('close', () => (socket.destroyed && data.length > 0 ? finish() : undefined));
    socket.on('error', () => undefined);
    socket.write(request);
    if (end) socket.end();
  });
}

const get = (target: string, extraHeaders = '') =>
  raw(`GET ${target} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${apiKey}\r\n${extraHeaders}Connection: close\r\n\r\n`);

function expectJsonError(answer: RawAnswer, status: number, code: string): void {
  expect({ status: answer.status, error: answer.body?.error }).toEqual({ status, error: code });
  expect(answer.headers['content-type']).toBe('application/json');
  expect(answer.body.message).toMatch(/\S/);
}

describe('URL and header limits', () => {
  test(`a URL of exactly ${LIMITS.urlChars} characters is served`, async () => {
    const target = '/api/v1/query?q=';
    const answer = await get(target + 'a'.repeat(LIMITS.urlChars - target.length));
    expect(answer.status).toBe(200);
  });

  test.each([LIMITS.urlChars + 1, 64 * 1024, 500_000])('a URL of %i characters is 414 uri_too_long', async (length) => {
    const target = '/api/v1/query?q=';
    const answer = await get(target + 'a'.repeat(length - target.length));
    expectJsonError(answer, 414, 'uri_too_long');
    expect(answer.body.message).toBe(`The URL (path and query string) must be at most ${LIMITS.urlChars} characters`);
  });

  test('headers over 64 KiB are 431 headers_too_large, and the message is about headers', async () => {
    const answer = await get('/api/v1/query', `X-Filler: ${'a'.repeat(64 * 1024)}\r\n`);
    expectJsonError(answer, 431, 'headers_too_large');
    expect(answer.body.message).toBe('The request headers must be at most 65536 bytes');
  });

  test('a request line and headers over 1 MiB together are refused by the parser, in JSON, naming both limits', async () => {
    const answer = await get(`/api/v1/query?q=${'a'.repeat(1024 * 1024)}`);
    expectJsonError(answer, 431, 'headers_too_large');
    expect(answer.body.message).toMatch(/URL may have at most 10240 characters, the headers 65536 bytes/);
  });
});

describe('request targets', () => {
  // A URL parser reads `//x/…` (and `/\x/…`, a backslash being a slash to it) as a host and the rest as
  // the path; HTTP reads the whole as the path, which no route has.
  test.each(['//x/api/v1/query', '//api/v1/query', '//x/api/v1/query?q=a', '/\\x/api/v1/query', '/\\/x/api/v1/query', '///api/v1/query'])(
    '%s is 404 not_found: a path that starts with two slashes names no host',
    async (target) => {
      expectJsonError(await get(target), 404, 'not_found');
    },
  );

  test('the absolute form (http://host/path) is read by its path, as RFC 9112 asks of a server; its path is as strict', async () => {
    expect((await get('http://localhost/api/v1/query?q=a')).status).toBe(200);
    expect((await get('HTTPS://elsewhere.example/api/v1/query')).status).toBe(200);
    expectJsonError(await get('http://localhost//x/api/v1/query'), 404, 'not_found');
  });

  test.each(['ftp://localhost/api/v1/query', '*'])('%s, which is neither a path nor an http(s) URL, is 404 not_found', async (target) => {
    expectJsonError(await get(target), 404, 'not_found');
  });
});

describe('methods', () => {
  test('CONNECT is answered 405 in JSON instead of a dropped socket', async () => {
    const answer = await raw('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', { end: false });
    expectJsonError(answer, 405, 'method_not_allowed');
  });

  test.each(['TRACE', 'OPTIONS', 'PATCH', 'PROPFIND'])('%s on a route is 405 with Allow to a valid key, and 401 without one', async (method) => {
    const answer = await raw(`${method} /api/v1/query HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${apiKey}\r\nConnection: close\r\n\r\n`);
    expectJsonError(answer, 405, 'method_not_allowed');
    expect(answer.headers.allow).toBe('GET, HEAD');
    expectJsonError(await raw(`${method} /api/v1/query HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`), 401, 'unauthorized');
  });

  test('a method HTTP does not know is 400 invalid_request, in JSON', async () => {
    expectJsonError(await raw('BREW /api/v1/query HTTP/1.1\r\nHost: localhost\r\n\r\n'), 400, 'invalid_request');
  });

  test('an Upgrade request is served as a plain request', async () => {
    expect((await get('/api/v1/query', 'Upgrade: websocket\r\n')).status).toBe(200);
  });
});

describe('a client that hangs up', () => {
  test('mid-body is logged as what it is (info), not as an error of the service, and the server goes on', async () => {
    logged.length = 0;
    const body = JSON.stringify(aRecord());
    await new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(
          `POST /api/v1/record HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${apiKey}\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${body.length + 100}\r\n\r\n${body}`,
        );
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 100);
      });
    });
    await eventually(async () => logged.some((l) => l.message === 'client went away'));
    expect(logged.filter((l) => l.level === 'error')).toEqual([]);
    expect((await get('/api/v1/query')).status).toBe(200);
  });
});
