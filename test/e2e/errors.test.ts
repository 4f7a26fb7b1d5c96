/**
 * Every row of the interface's errors table (docs/api.md, "Errors"), over real HTTP against the local server:
 * the exact status, the exact `error` code, a non-empty `message` and `Content-Type: application/json`.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAuthorizerHandler } from '../../functions/authorizer/handler.js';
import { createRecordHandler } from '../../functions/record/handler.js';
import { createGatewayServer } from '../../local/gateway.js';
import { createTenantWithKey } from '../../local/tenants.js';
import { openSqliteAdapters, type SqliteAdapters } from '../../shared/adapters/local/index.js';
import { RECORD_TYPES } from '../../shared/domain/record.js';
import type { RecordStore } from '../../shared/ports.js';
import { aRecord, ROOMY, startTestService, type TestService } from '../support/local-service.js';
import { checkAnswer } from '../support/response-shapes.js';

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

interface SendInit {
  /** The API key; `null` sends no Authorization header; absent uses the roomy test tenant. */
  key?: string | null;
  headers?: Record<string, string>;
  /** Sent as `application/json`. */
  json?: unknown;
  /** Sent as bytes with no Content-Type unless `headers` sets one. */
  raw?: string | Uint8Array;
}

let svc: TestService;

// The authorizer cache is off so that a revoked key is refused at once.
beforeAll(async () => {
  svc = await startTestService({ MEMORY_AUTH_CACHE_SECONDS: '0' });
});
afterAll(() => svc.stop());

/** One request over real fetch to `base` (the test service unless given); its answer must fit the documented schemas. */
async function send(method: string, path: string, init: SendInit = {}, base = svc.url): Promise<Reply> {
  const headers: Record<string, string> = {};
  const key = init.key === undefined ? svc.tenant.api_key : init.key;
  if (key !== null) headers['authorization'] = `Bearer ${key}`;
  let body: Uint8Array | undefined;
  if (init.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = Buffer.from(JSON.stringify(init.json), 'utf8');
  } else if (init.raw !== undefined) {
    // Bytes, not a string: fetch would otherwise add `Content-Type: text/plain` on its own.
    body = typeof init.raw === 'string' ? Buffer.from(init.raw, 'utf8') : init.raw;
  }
  Object.assign(headers, init.headers);
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  checkAnswer(method, path, res.status, res.headers, parsed);
  return { status: res.status, headers: res.headers, text, body: parsed };
}

const write = (record: unknown, init: Omit<SendInit, 'json'> = {}) => send('POST', '/api/v1/record', { ...init, json: record });
/** A search; on the AWS-shaped backend it first waits for the stream to reach the index, as Client.recall does. */
const query = async (qs: string, init: SendInit = {}) => {
  await svc.backend.settle();
  return send('GET', `/api/v1/query${qs}`, init);
};

function expectJson(r: Reply): void {
  expect(r.headers.get('content-type')).toMatch(/^application\/json(;|$)/);
  expect(r.body).toBeDefined();
}

/** Asserts the status, the error code, a non-empty message and a JSON Content-Type. */
function expectError(r: Reply, status: number, code: string): void {
  expect({ status: r.status, body: r.body }).toMatchObject({ status, body: { error: code } });
  expectJson(r);
  if (status === 429) {
    // decisions.md: a 429 body carries retry_after and *may* carry a message.
    expect(Number.isInteger(r.body.retry_after)).toBe(true);
    expect(r.body.retry_after).toBeGreaterThanOrEqual(1);
    if (r.body.message !== undefined) expect(r.body.message).toEqual(expect.stringMatching(/\S/));
  } else {
    expect(r.body.message).toEqual(expect.stringMatching(/\S/));
  }
}

function expectCreated(r: Reply): void {
  expect({ status: r.status, body: r.body }).toMatchObject({ status: 201, body: { id: expect.any(String) } });
  expectJson(r);
}

const currentMonth = () => new Date().toISOString().slice(0, 7);
const secondsToNextUtcMonth = () => {
  const now = new Date();
  return Math.ceil((Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - now.getTime()) / 1000);
};

describe('400 invalid_json', () => {
  test.each([
    ['not JSON', '{"agent_id": "a",'],
    ['a JSON array', JSON.stringify([aRecord()])],
    ['a JSON string', JSON.stringify('hello')],
    ['a JSON number', '42'],
    ['JSON null', 'null'],
    ['an empty body', ''],
  ])('a write whose body is %s', async (_, raw) => {
    expectError(await send('POST', '/api/v1/record', { raw, headers: { 'content-type': 'application/json' } }), 400, 'invalid_json');
  });

  test('classify whose body is not JSON', async () => {
    expectError(await send('POST', '/v1/classify', { raw: 'title=x', headers: { 'content-type': 'application/json' } }), 400, 'invalid_json');
  });
});

describe('400 missing_field', () => {
  const fields = ['agent_id', 'type', 'title', 'body'] as const;
  const cases = fields.flatMap((field) =>
    (
      [
        ['absent', undefined],
        ['null', null],
        ['empty', ''],
        ['blank', '   '],
      ] as const
    ).map(([how, value]) => [field, how, value] as const),
  );

  test.each(cases)('%s %s', async (field, _, value) => {
    const record: Record<string, unknown> = aRecord();
    if (value === undefined) delete record[field];
    else record[field] = value;
    const r = await write(record);
    expectError(r, 400, 'missing_field');
    expect(r.body.message).toContain(field);
  });

  test('blank with tabs and newlines counts as blank', async () => {
    const r = await write(aRecord({ title: '\t\n ' }));
    expectError(r, 400, 'missing_field');
    expect(r.body.message).toContain('title');
  });
});

describe('400 invalid_field', () => {
  const metadataOver = { blob: 'x'.repeat(16384) };

  test.each<[string, Record<string, unknown>, string]>([
    ['title as a number', { title: 5 }, 'title'],
    ['body as a boolean', { body: true }, 'body'],
    ['agent_id as an object', { agent_id: { id: 1 } }, 'agent_id'],
    ['client as a number', { client: 7 }, 'client'],
    ['agent_id over 256 characters', { agent_id: 'a'.repeat(257) }, 'agent_id'],
    ['title over 2048 characters', { title: 't'.repeat(2049) }, 'title'],
    ['client over 256 characters', { client: 'c'.repeat(257) }, 'client'],
    ['metadata as an array', { metadata: [1, 2] }, 'metadata'],
    ['metadata as a string', { metadata: '{"a":1}' }, 'metadata'],
    ['metadata as a number', { metadata: 3 }, 'metadata'],
    ['metadata over 16384 bytes serialized', { metadata: metadataOver }, 'metadata'],
    ['the misspelt field metdata', { metdata: { a: 1 } }, 'metdata'],
    ['id on write', { id: '0190b6a4-6c1e-7000-8000-000000000000' }, 'id'],
    ['created_at on write', { created_at: '2026-01-01T00:00:00.000Z' }, 'created_at'],
    ['tenant_id on write', { tenant_id: '0190b6a4-6c1e-7000-8000-000000000000' }, 'tenant_id'],
    ['rank on write', { rank: 1 }, 'rank'],
  ])('%s', async (_, overrides, field) => {
    const r = await write(aRecord(overrides));
    expectError(r, 400, 'invalid_field');
    expect(r.body.message).toContain(field);
  });

  test('the limits themselves are accepted: agent_id 256, client 256, title 2048, metadata 16384 bytes', async () => {
    // {"blob":"…"} is 11 bytes around the value.
    const metadata = { blob: 'é'.repeat(8186) + 'x' };
    expect(Buffer.byteLength(JSON.stringify(metadata))).toBe(16384);
    expectCreated(await write(aRecord({ agent_id: 'a'.repeat(256), client: 'c'.repeat(256), title: 't'.repeat(2048), metadata })));
    expectError(await write(aRecord({ metadata: { blob: metadata.blob + 'y' } })), 400, 'invalid_field');
  });

  test('optional fields may be null or absent', async () => {
    expectCreated(await write(aRecord({ client: null, metadata: null })));
    expectCreated(await write(aRecord({ metadata: {} })));
  });

  test('Idempotency-Key over 255 characters', async () => {
    const r = await write(aRecord(), { headers: { 'idempotency-key': 'k'.repeat(256) } });
    expectError(r, 400, 'invalid_field');
    expect(r.body.message).toContain('Idempotency-Key');
    expectCreated(await write(aRecord(), { headers: { 'idempotency-key': 'k'.repeat(255) } }));
  });
});

describe('400 invalid_type', () => {
  test.each(['bogus', 'Fact', 'open-item', ' fact'])('type %j on write; the message lists all six', async (type) => {
    const r = await write(aRecord({ type }));
    expectError(r, 400, 'invalid_type');
    for (const t of RECORD_TYPES) expect(r.body.message).toContain(t);
  });

  test('each of the six types is accepted', async () => {
    for (const type of RECORD_TYPES) expectCreated(await write(aRecord({ type })));
  });

  test('type=bogus on query; the message lists all six', async () => {
    const r = await query('?type=bogus');
    expectError(r, 400, 'invalid_type');
    for (const t of RECORD_TYPES) expect(r.body.message).toContain(t);
  });
});

describe('400 body_too_large', () => {
  test.each([
    ['ASCII', 'a'.repeat(65537)],
    ['2-byte é', 'é'.repeat(32768) + 'a'],
    ['4-byte emoji', '😀'.repeat(16384) + 'a'],
  ])('a body of 65537 UTF-8 bytes (%s)', async (_, body) => {
    expect(Buffer.byteLength(body, 'utf8')).toBe(65537);
    expectError(await write(aRecord({ body })), 400, 'body_too_large');
  });

  test.each([
    ['ASCII', 'a'.repeat(65536)],
    ['2-byte é', 'é'.repeat(32768)],
    ['4-byte emoji', '😀'.repeat(16384)],
  ])('a body of exactly 65536 UTF-8 bytes (%s) is stored', async (_, body) => {
    expect(Buffer.byteLength(body, 'utf8')).toBe(65536);
    expectCreated(await write(aRecord({ body })));
  });

  test('a body over 64 KiB inside a request of exactly 1 MiB is 400, not 413', async () => {
    const base = JSON.stringify(aRecord({ body: '' }));
    const raw = JSON.stringify(aRecord({ body: 'b'.repeat(1024 * 1024 - base.length) }));
    expect(Buffer.byteLength(raw)).toBe(1024 * 1024);
    expectError(await send('POST', '/api/v1/record', { raw, headers: { 'content-type': 'application/json' } }), 400, 'body_too_large');
  });

  test('classify applies the same body limit', async () => {
    expectError(await send('POST', '/v1/classify', { json: { title: 't', body: 'a'.repeat(65537) } }), 400, 'body_too_large');
  });
});

describe('400 invalid_limit', () => {
  test.each(['0', '101', 'abc', '2.5', '-1', '', '1e1', ' 5'])('limit=%j', async (limit) => {
    expectError(await query(`?limit=${encodeURIComponent(limit)}`), 400, 'invalid_limit');
  });

  test.each(['1', '100'])('limit=%s is accepted', async (limit) => {
    const r = await query(`?limit=${limit}`);
    expect(r.status).toBe(200);
    expectJson(r);
    expect(Array.isArray(r.body)).toBe(true);
  });
});

describe('query parameters', () => {
  test('parameters the interface does not name are ignored', async () => {
    const r = await query('?foo=bar&offset=-1&q=dark');
    expect(r.status).toBe(200);
    expectJson(r);
  });

  test('agent_id over 256 characters is invalid_field', async () => {
    const r = await query(`?agent_id=${'a'.repeat(257)}`);
    expectError(r, 400, 'invalid_field');
    expect(r.body.message).toContain('agent_id');
  });
});

describe('400 invalid_since', () => {
  test.each(['2026-13-01', '2026-02-30', 'garbage', '2026-1-1', '2026-01-01T25:00:00Z', ''])('since=%j', async (since) => {
    expectError(await query(`?since=${encodeURIComponent(since)}`), 400, 'invalid_since');
  });

  test.each(['2026-01-01', '2026-01-01T10:00:00Z', '2026-01-01T10:00:00.123+02:00', '2024-02-29'])('since=%s is accepted', async (since) => {
    const r = await query(`?since=${encodeURIComponent(since)}`);
    expect(r.status).toBe(200);
    expectJson(r);
  });
});

describe('dates from 0001-01-01 to 9999-12-31 UTC', () => {
  // Once the offset is applied, each falls outside: before 0001-01-01T00:00Z or after 9999-12-31T23:59:59.999Z.
  test.each(['9999-12-31T23:59:59-14:00', '0001-01-01T00:00:00+00:01', '0000-12-31', '10000-01-01'])(
    '%s is invalid_since, invalid_until, and invalid_field as a forget\'s before',
    async (date) => {
      const at = encodeURIComponent(date);
      expectError(await query(`?since=${at}`), 400, 'invalid_since');
      expectError(await query(`?until=${at}`), 400, 'invalid_until');
      expectError(await send('GET', `/api/v1/record?since=${at}`), 400, 'invalid_since');
      expectError(await send('GET', `/api/v1/record?until=${at}`), 400, 'invalid_until');
      const forget = await send('POST', '/api/v1/forget', { json: { before: date, dry_run: true } });
      expectError(forget, 400, 'invalid_field');
      expect(forget.body.message).toMatch(/^before /);
    },
  );

  test('the edges are read exactly, and a listing between them pages on with its own cursor', async () => {
    const tenant = await svc.newTenant();
    for (let i = 0; i < 2; i++) expectCreated(await write(aRecord(), { key: tenant.api_key }));
    const list = (qs: string) => send('GET', `/api/v1/record${qs}`, { key: tenant.api_key });
    const first = await list('?since=0001-01-01&until=9999-12-31T23:59:59.999Z&limit=1');
    expect(first.status).toBe(200);
    expect(first.body.records).toHaveLength(1);
    const second = await list(`?cursor=${encodeURIComponent(first.body.next_cursor)}&limit=1`);
    expect(second.status).toBe(200);
    expect(second.body.records).toHaveLength(1);
    expect((await list('?until=0099-12-31')).body.records).toEqual([]);
    expect((await list('?since=9999-12-31T23:59:59.999Z')).body.records).toEqual([]);
    expect(await query('?since=0099-12-31T23:00:00-01:00', { key: tenant.api_key })).toMatchObject({ status: 200, body: [{}, {}] });
    expect(await query('?since=9999-12-31T23:59:59.999Z', { key: tenant.api_key })).toMatchObject({ status: 200, body: [] });
  });
});

describe('401 unauthorized', () => {
  const unauthorized = async (headers: Record<string, string>) => {
    const r = await send('POST', '/api/v1/record', { key: null, headers, json: aRecord() });
    expectError(r, 401, 'unauthorized');
  };

  test('no Authorization header', () => unauthorized({}));
  test('another scheme: Basic xyz', () => unauthorized({ authorization: 'Basic xyz' }));
  test('another scheme carrying a valid key', () => unauthorized({ authorization: `Token ${svc.tenant.api_key}` }));
  test('Bearer with an empty token', () => unauthorized({ authorization: 'Bearer ' }));
  test('Bearer alone', () => unauthorized({ authorization: 'Bearer' }));
  test('a key followed by another word', () => unauthorized({ authorization: `Bearer ${svc.tenant.api_key} extra` }));

  test('Bearer and spaces, exactly as sent on the wire', async () => {
    // fetch trims header values, so node:http sends this one untouched.
    const r = await new Promise<Reply>((resolve, reject) => {
      const req = httpRequest(`${svc.url}/api/v1/query`, { headers: { authorization: 'Bearer   ' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
          resolve({ status: res.statusCode ?? 0, headers, text, body: JSON.parse(text) });
        });
      });
      req.on('error', reject);
      req.end();
    });
    expectError(r, 401, 'unauthorized');
  });
  test('an unknown key', () => unauthorized({ authorization: `Bearer mem_${'x'.repeat(43)}` }));
  test('a valid key with an extra character', () => unauthorized({ authorization: `Bearer ${svc.tenant.api_key}x` }));

  test('the query and classify routes refuse a missing key too', async () => {
    expectError(await send('GET', '/api/v1/query', { key: null }), 401, 'unauthorized');
    expectError(await send('POST', '/v1/classify', { key: null, json: { title: 't', body: 'b' } }), 401, 'unauthorized');
  });

  test('a revoked key', async () => {
    const tenant = await svc.newTenant();
    expectCreated(await write(aRecord(), { key: tenant.api_key }));
    expect(await svc.backend.keys.revoke({ keyId: tenant.key_id })).toMatchObject({ status: 'revoked' });
    expectError(await write(aRecord(), { key: tenant.api_key }), 401, 'unauthorized');
    expectError(await query('', { key: tenant.api_key }), 401, 'unauthorized');
  });

  test.each(['bearer', 'BEARER', 'BeArEr'])('the scheme word is case-insensitive: %s', async (scheme) => {
    const r = await send('POST', '/api/v1/record', { key: null, headers: { authorization: `${scheme} ${svc.tenant.api_key}` }, json: aRecord() });
    expectCreated(r);
  });

  describe('authentication comes first', () => {
    test.each<[string, SendInit]>([
      ['invalid JSON', { raw: '{nope', headers: { 'content-type': 'application/json' } }],
      ['missing fields', { json: {} }],
      ['an invalid type', { json: aRecord({ type: 'bogus' }) }],
      ['a text/plain body', { raw: 'hello', headers: { 'content-type': 'text/plain' } }],
      ['no Content-Type', { raw: '{}' }],
      ['a bad Idempotency-Key', { json: aRecord(), headers: { 'idempotency-key': 'k'.repeat(300) } }],
      ['a body over 1 MiB', { raw: Buffer.alloc(1024 * 1024 + 1, 0x61), headers: { 'content-type': 'application/json' } }],
    ])('a write with no key and %s gets 401', async (_, init) => {
      expectError(await send('POST', '/api/v1/record', { ...init, key: null }), 401, 'unauthorized');
    });

    test('a write with an unknown key and an invalid body gets 401', async () => {
      expectError(await send('POST', '/api/v1/record', { key: 'mem_unknown', raw: 'x', headers: { 'content-type': 'text/plain' } }), 401, 'unauthorized');
    });

    test.each(['?limit=0', '?since=garbage', '?type=bogus'])('a query with no key and %s gets 401', async (qs) => {
      expectError(await query(qs, { key: null }), 401, 'unauthorized');
    });

    test('an unauthenticated request is not rate-limited for the key it names', async () => {
      const tenant = await svc.newTenant({ rate: 1, burst: 1 });
      for (let i = 0; i < 3; i++) expectError(await query('', { key: `${tenant.api_key}x` }), 401, 'unauthorized');
      expect((await query('', { key: tenant.api_key })).status).toBe(200);
    });
  });
});

describe('404 not_found and 405 method_not_allowed', () => {
  test.each([
    ['GET', '/api/v1/nothing'],
    ['POST', '/api/v2/record'],
    ['GET', '/'],
    ['POST', '/api/v1/record/'],
    ['GET', '/api/v1/record/0190b6a4-6c1e-7000-8000-000000000000'],
  ])('%s %s is 404', async (method, path) => {
    expectError(await send(method, path, method === 'POST' ? { json: aRecord() } : {}), 404, 'not_found');
  });

  test.each([
    ['PUT', '/api/v1/record', 'POST, GET, HEAD'],
    ['DELETE', '/api/v1/record', 'POST, GET, HEAD'],
    ['POST', '/api/v1/record/0190b6a4-6c1e-7000-8000-000000000000', 'GET, HEAD, PATCH, DELETE'],
    ['PUT', '/api/v1/record/0190b6a4-6c1e-7000-8000-000000000000', 'GET, HEAD, PATCH, DELETE'],
    ['GET', '/api/v1/forget', 'POST'],
    ['DELETE', '/api/v1/forget/0190b6a4-6c1e-7000-8000-000000000000', 'GET, HEAD'],
    ['POST', '/api/v1/query', 'GET, HEAD'],
    ['GET', '/v1/classify', 'POST'],
    ['GET', '/api/v1/classify', 'POST'],
  ])('%s %s is 405 with Allow: %s', async (method, path, allow) => {
    const r = await send(method, path, method === 'GET' || method === 'DELETE' ? {} : { json: aRecord() });
    expectError(r, 405, 'method_not_allowed');
    expect(r.headers.get('allow')).toBe(allow);
  });
});

describe('413 payload_too_large', () => {
  const oneMiB = 1024 * 1024;

  test('a request body of 1 MiB + 1 byte, with a valid key, declared by Content-Length', async () => {
    const r = await send('POST', '/api/v1/record', { raw: Buffer.alloc(oneMiB + 1, 0x61), headers: { 'content-type': 'application/json' } });
    expectError(r, 413, 'payload_too_large');
  });

  test('a JSON record whose whole request is 1 MiB + 1 byte', async () => {
    const base = JSON.stringify(aRecord({ body: '' }));
    const raw = JSON.stringify(aRecord({ body: 'b'.repeat(oneMiB + 1 - base.length) }));
    expect(Buffer.byteLength(raw)).toBe(oneMiB + 1);
    expectError(await send('POST', '/api/v1/record', { raw, headers: { 'content-type': 'application/json' } }), 413, 'payload_too_large');
  });

  test('a chunked request body over 1 MiB, with no Content-Length', async () => {
    const chunk = new Uint8Array(64 * 1024).fill(0x61);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > oneMiB) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const res = await fetch(svc.url + '/api/v1/record', {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.tenant.api_key}`, 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    });
    const text = await res.text();
    expectError({ status: res.status, headers: res.headers, text, body: JSON.parse(text) }, 413, 'payload_too_large');
  });

  test('classify refuses a request over 1 MiB too', async () => {
    const r = await send('POST', '/v1/classify', { raw: Buffer.alloc(oneMiB + 1, 0x61), headers: { 'content-type': 'application/json' } });
    expectError(r, 413, 'payload_too_large');
  });

  test('the server keeps serving after refusing large bodies', async () => {
    await Promise.all(
      [0, 1, 2].map(async () => {
        const r = await send('POST', '/api/v1/record', { raw: Buffer.alloc(oneMiB + 10, 0x61), headers: { 'content-type': 'application/json' } });
        expectError(r, 413, 'payload_too_large');
      }),
    );
    expectCreated(await write(aRecord()));
  });
});

describe('415 unsupported_media_type', () => {
  const raw = JSON.stringify(aRecord());

  test.each([
    ['text/plain', { 'content-type': 'text/plain' }],
    ['application/x-www-form-urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['no Content-Type', {}],
  ])('a write with %s', async (_, headers: Record<string, string>) => {
    expectError(await send('POST', '/api/v1/record', { raw, headers }), 415, 'unsupported_media_type');
  });

  test('classify with text/plain', async () => {
    expectError(await send('POST', '/v1/classify', { raw: '{"title":"t","body":"b"}', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
  });

  test.each(['application/json; charset=utf-8', 'Application/JSON', 'application/json;charset=UTF-8'])('%s is accepted', async (contentType) => {
    expectCreated(await send('POST', '/api/v1/record', { raw, headers: { 'content-type': contentType } }));
  });
});

describe('422 idempotency_key_reused, and replays', () => {
  test('the same key with a different body', async () => {
    const key = `reuse-${Date.now()}`;
    expectCreated(await write(aRecord({ title: 'first' }), { headers: { 'idempotency-key': key } }));
    expectError(await write(aRecord({ title: 'second' }), { headers: { 'idempotency-key': key } }), 422, 'idempotency_key_reused');
  });

  test('the same key with the same body replays the 201 and counts once', async () => {
    const tenant = await svc.newTenant();
    const init = { key: tenant.api_key, headers: { 'idempotency-key': 'same-request-1' } };
    const first = await write(aRecord({ title: 'Idempotent write' }), init);
    expectCreated(first);
    // Key order does not make it a different request.
    const { body, title, agent_id, type } = aRecord({ title: 'Idempotent write' });
    const second = await write({ type, body, title, agent_id }, init);
    expectCreated(second);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('location')).toBe(`/api/v1/record/${first.body.id}`);

    const usage = await svc.backend.usage.list(currentMonth(), tenant.tenant_id);
    expect(usage).toEqual([expect.objectContaining({ tenant_id: tenant.tenant_id, records: 1 })]);
    const found = await query('?q=idempotent', { key: tenant.api_key });
    expect(found.body.map((r: { id: string }) => r.id)).toEqual([first.body.id]);
  });
});

describe('412 version_conflict', () => {
  test('an update whose If-Match names another version than the record has; nothing changes', async () => {
    const created = await write(aRecord({ title: 'Version one' }));
    expectCreated(created);
    const path = `/api/v1/record/${created.body.id}`;
    expectError(await send('PATCH', path, { json: { title: 'Never stored' }, headers: { 'if-match': '"2"' } }), 412, 'version_conflict');
    const read = await send('GET', path);
    expect({ title: read.body.title, version: read.body.version, etag: read.headers.get('etag') }).toEqual({ title: 'Version one', version: 1, etag: '"1"' });
  });

  test('an update with a body that is not JSON is 415 or 400, as a write is', async () => {
    const created = await write(aRecord());
    const path = `/api/v1/record/${created.body.id}`;
    expectError(await send('PATCH', path, { raw: '{"title":"t"}', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
    expectError(await send('PATCH', path, { raw: '{"title":', headers: { 'content-type': 'application/json' } }), 400, 'invalid_json');
  });
});

describe('429 rate_limited', () => {
  test('the third quick request of a key with rate 1 and burst 2', async () => {
    const tenant = await svc.newTenant({ rate: 1, burst: 2 });
    const statuses: number[] = [];
    let last: Reply | undefined;
    for (let i = 0; i < 3; i++) {
      last = await query('', { key: tenant.api_key });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 429]);
    expectError(last!, 429, 'rate_limited');
    expect(last!.headers.get('retry-after')).toBe(String(last!.body.retry_after));
  });

  test('writes and classify are rate-limited too', async () => {
    const tenant = await svc.newTenant({ rate: 1, burst: 1 });
    expectCreated(await write(aRecord(), { key: tenant.api_key }));
    const w = await write(aRecord(), { key: tenant.api_key });
    expectError(w, 429, 'rate_limited');
    expect(w.headers.get('retry-after')).toBe(String(w.body.retry_after));
    const c = await send('POST', '/v1/classify', { key: tenant.api_key, json: { title: 't', body: 'b' } });
    expectError(c, 429, 'rate_limited');
    // The refused write was not stored and not counted.
    const usage = await svc.backend.usage.list(currentMonth(), tenant.tenant_id);
    expect(usage).toEqual([expect.objectContaining({ records: 1 })]);
  });
});

describe('429 query_quota_exceeded', () => {
  test('the third search of a tenant with a query quota of 2', async () => {
    const tenant = await svc.newTenant({ queryQuota: 2 });
    expect((await query('?q=anything', { key: tenant.api_key })).status).toBe(200);
    expect((await query('', { key: tenant.api_key })).status).toBe(200);
    const r = await query('?q=anything', { key: tenant.api_key });
    const expected = secondsToNextUtcMonth();
    expectError(r, 429, 'query_quota_exceeded');
    expect(Math.abs(r.body.retry_after - expected)).toBeLessThanOrEqual(2);
    expect(r.headers.get('retry-after')).toBe(String(r.body.retry_after));
    expectError(await query('', { key: tenant.api_key }), 429, 'query_quota_exceeded');

    const usage = await svc.backend.usage.list(currentMonth(), tenant.tenant_id);
    expect(usage).toEqual([expect.objectContaining({ tenant_id: tenant.tenant_id, queries: 2, records: 0 })]);
  });

  test('invalid searches are not counted', async () => {
    const tenant = await svc.newTenant({ queryQuota: 1 });
    expectError(await query('?limit=0', { key: tenant.api_key }), 400, 'invalid_limit');
    expectError(await query('?since=nope', { key: tenant.api_key }), 400, 'invalid_since');
    expect((await query('', { key: tenant.api_key })).status).toBe(200);
    expectError(await query('', { key: tenant.api_key }), 429, 'query_quota_exceeded');
  });
});

describe('507 record_quota_exceeded', () => {
  test('the third write of a tenant with a record quota of 2', async () => {
    const tenant = await svc.newTenant({ recordQuota: 2 });
    expectCreated(await write(aRecord({ title: 'quota one' }), { key: tenant.api_key }));
    expectCreated(await write(aRecord({ title: 'quota two' }), { key: tenant.api_key }));
    expectError(await write(aRecord({ title: 'quota three' }), { key: tenant.api_key }), 507, 'record_quota_exceeded');
    // Rejected writes count against nothing, and invalid ones do not use quota.
    expectError(await write(aRecord({ type: 'bogus' }), { key: tenant.api_key }), 400, 'invalid_type');

    const usage = await svc.backend.usage.list(currentMonth(), tenant.tenant_id);
    expect(usage).toEqual([expect.objectContaining({ tenant_id: tenant.tenant_id, records: 2 })]);
    const found = await query('?q=quota', { key: tenant.api_key });
    expect(found.body.map((r: { title: string }) => r.title).sort()).toEqual(['quota one', 'quota two']);
  });
});

describe('500 internal_error', () => {
  let dir: string;
  let adapters: SqliteAdapters;
  let server: Server;
  let base: string;
  let apiKey: string;
  const logged: unknown[][] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memory-500-'));
    adapters = openSqliteAdapters(join(dir, 'memory.db'));
    apiKey = (await createTenantWithKey(adapters.keys, 'boom', ROOMY)).api_key;
    const logger = new Logger({ serviceName: 'memory', logLevel: 'SILENT' });
    // Keep what the server logs as errors, to find the request id in it.
    logger.error = ((...args: unknown[]) => {
      logged.push(args);
    }) as typeof logger.error;
    const boom = async (): Promise<never> => {
      throw new Error('boom secret');
    };
    const failing: Pick<RecordStore, 'create' | 'get' | 'update'> = { create: boom, get: boom, update: boom };
    server = createGatewayServer({
      routes: [{ method: 'POST', path: '/api/v1/record', name: 'record', handler: createRecordHandler({ records: failing, logger }) }],
      authorizer: createAuthorizerHandler({ keys: adapters.keys, logger }),
      logger,
      authCacheMs: 0,
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    adapters.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('shows no internal detail and carries the request id of the response and the log', async () => {
    const r = await send('POST', '/api/v1/record', { key: apiKey, json: aRecord() }, base);
    expectError(r, 500, 'internal_error');
    expect(r.text).not.toMatch(/boom|secret/i);
    expect(r.text).not.toMatch(/\bat .+:\d+:\d+/); // no stack frame
    expect(Object.keys(r.body).sort()).toEqual(['error', 'message', 'request_id']);
    expect(r.body.request_id).toEqual(expect.stringMatching(/\S/));
    expect(r.headers.get('x-request-id')).toBe(r.body.request_id);
    expect(JSON.stringify(logged)).toContain(r.body.request_id);
  });

  test('every request gets its own request id', async () => {
    const [a, b] = await Promise.all([0, 1].map(() => send('POST', '/api/v1/record', { key: apiKey, json: aRecord() }, base)));
    expect(a!.body.request_id).not.toBe(b!.body.request_id);
  });

  test('the failing gateway still authenticates first', async () => {
    expectError(await send('POST', '/api/v1/record', { key: null, json: aRecord() }, base), 401, 'unauthorized');
  });

  test('an authorizer that fails (not one that refuses) is a 500, as API Gateway answers it, never a 401', async () => {
    const broken = createGatewayServer({
      routes: [{ method: 'POST', path: '/api/v1/record', name: 'record', handler: createRecordHandler({ records: adapters.records, logger: new Logger({ logLevel: 'SILENT' }) }) }],
      authorizer: async () => {
        throw new Error('DynamoDB is down');
      },
      logger: new Logger({ logLevel: 'SILENT' }),
      authCacheMs: 0,
    });
    await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
    try {
      const r = await send('POST', '/api/v1/record', { key: apiKey, json: aRecord() }, `http://127.0.0.1:${(broken.address() as AddressInfo).port}`);
      expectError(r, 500, 'internal_error');
      expect(r.text).not.toMatch(/DynamoDB/);
    } finally {
      await new Promise<void>((resolve) => broken.close(() => resolve()));
    }
  });
});

describe('classify', () => {
  test.each(['/v1/classify', '/api/v1/classify'])('POST %s answers a suggestion', async (path) => {
    const r = await send('POST', path, { json: { title: 'We decided to adopt Postgres', body: 'The team agreed on it.' } });
    expect(r.status).toBe(200);
    expectJson(r);
    expect(Object.keys(r.body).sort()).toEqual(['confidence', 'model', 'scores', 'type']);
    expect(RECORD_TYPES).toContain(r.body.type);
    expect(r.body.confidence).toBeGreaterThanOrEqual(0);
    expect(r.body.confidence).toBeLessThanOrEqual(1);
    expect(typeof r.body.model).toBe('string');
    expect(Object.keys(r.body.scores).sort()).toEqual([...RECORD_TYPES].sort());
    for (const score of Object.values(r.body.scores)) {
      expect(score).toBeGreaterThanOrEqual(0);
      expect(score).toBeLessThanOrEqual(1);
    }
  });

  test.each(['/v1/classify', '/api/v1/classify'])('%s without a title is missing_field', async (path) => {
    const r = await send('POST', path, { json: { body: 'b' } });
    expectError(r, 400, 'missing_field');
    expect(r.body.message).toContain('title');
  });

  test('a blank body is missing_field', async () => {
    const r = await send('POST', '/v1/classify', { json: { title: 't', body: ' ' } });
    expectError(r, 400, 'missing_field');
    expect(r.body.message).toContain('body');
  });

  test('agent_id and type are not needed, and when sent (as in the record to be written) are checked as on write and change nothing', async () => {
    const text = { title: 'We decided to adopt Postgres', body: 'The team agreed on it.' };
    const alone = await send('POST', '/v1/classify', { json: text });
    const withBoth = await send('POST', '/v1/classify', { json: { ...text, agent_id: 'planner', type: 'signal' } });
    expect(alone.status).toBe(200);
    expect(withBoth.status).toBe(200);
    expect(withBoth.body).toEqual(alone.body);
    expectError(await send('POST', '/v1/classify', { json: { ...text, type: 'memo' } }), 400, 'invalid_type');
    expectError(await send('POST', '/v1/classify', { json: { ...text, agent_id: 'x'.repeat(10_000) } }), 400, 'invalid_field');
    expectError(await send('POST', '/v1/classify', { json: { ...text, agent_id: 7 } }), 400, 'invalid_field');
  });

  test.each(['client', 'metadata', 'supersedes', 'titel'])('any other field, %s included, is invalid_field', async (field) => {
    const r = await send('POST', '/v1/classify', { json: { title: 't', body: 'b', [field]: 'x' } });
    expectError(r, 400, 'invalid_field');
    expect(r.body.message).toContain(field);
  });

  test('counts against neither quota', async () => {
    const tenant = await svc.newTenant({ recordQuota: 1, queryQuota: 1 });
    for (let i = 0; i < 3; i++) {
      expect((await send('POST', '/v1/classify', { key: tenant.api_key, json: { title: 't', body: 'b' } })).status).toBe(200);
    }
    expect(await svc.backend.usage.list(currentMonth(), tenant.tenant_id)).toEqual([]);
  });
});

describe('choices documented in docs/api.md', () => {
  test('authentication comes first, whatever else is wrong: an unknown path or a wrong method is 401 without a valid key, 404/405 with one', async () => {
    for (const key of [null, 'mem_not_a_key']) {
      expectError(await send('GET', '/api/v1/nope', { key }), 401, 'unauthorized');
      expectError(await send('GET', '/nope', { key }), 401, 'unauthorized');
      expectError(await send('DELETE', '/api/v1/query', { key }), 401, 'unauthorized');
      expectError(await send('PUT', '/api/v1/record/0193a000-0000-7000-8000-000000000001', { key, json: {} }), 401, 'unauthorized');
    }
    expectError(await send('GET', '/api/v1/nope'), 404, 'not_found');
    expectError(await send('DELETE', '/api/v1/query'), 405, 'method_not_allowed');
    // A path only public routes have needs no key for its 405.
    expectError(await send('POST', '/healthz', { key: null }), 405, 'method_not_allowed');
  });

  test('a type of the wrong JSON type is invalid_type, so its message lists the six values', async () => {
    const r = await send('POST', '/api/v1/record', { json: { agent_id: 'a', type: 5, title: 't', body: 'b' } });
    expectError(r, 400, 'invalid_type');
    expect(r.body.message).toContain('open_item');
  });
});
