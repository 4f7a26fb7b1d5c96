/**
 * What a hostile or careless client can send, over real HTTP, on each backend (jest.config.js runs this
 * suite on SQLite and again in the AWS-shaped mode): the hardest records the limits allow are stored and
 * read back exactly by every read; what cannot be read back exactly is refused with a 400 that says why;
 * HEAD answers as GET does; a null optional field is the same request as an absent one.
 */
import { LIMITS } from '../../shared/domain/record.js';
import { aRecord, Client, eventually, startTestService, type TestService } from '../support/local-service.js';
import { worstCaseRecords } from './worst-case-records.js';

let svc: TestService;
let api: Client;

beforeAll(async () => {
  svc = await startTestService();
  api = svc.client(svc.tenant.api_key);
});
afterAll(() => svc.stop());

/** The fields a caller wrote, as a search result carries them. */
const written = (hit: Record<string, unknown>) => ({
  agent_id: hit.agent_id,
  type: hit.type,
  title: hit.title,
  body: hit.body,
  client: hit.client,
  metadata: hit.metadata,
});
const asWritten = (record: Record<string, unknown>) => ({ client: null, metadata: null, ...record });

/** Sends raw bytes as a JSON write with the test tenant's key. */
async function writeRaw(path: string, bytes: string | Uint8Array) {
  const res = await fetch(svc.url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${svc.tenant.api_key}`, 'content-type': 'application/json' },
    body: typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes,
  });
  return { status: res.status, body: (await res.json()) as { error: string; message: string } };
}

/** A write whose body is `{…a valid record…, "<field>": <json>}`, as raw JSON text. */
const withRaw = (field: string, json: string) => JSON.stringify(aRecord()).slice(0, -1) + `,${JSON.stringify(field)}:${json}}`;
const nestedJson = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

describe('the worst-case records the limits allow', () => {
  test('are stored, then read back exactly by the newest-first listing, by search and with their classification', async () => {
    const records = worstCaseRecords();
    const tenant = await svc.newTenant({}, 'worst-case');
    const client = svc.client(tenant.api_key);
    const ids: string[] = [];
    for (const record of records) {
      const r = await client.remember(record);
      expect([record.title?.toString().slice(0, 40), r.status, r.body.error]).toEqual([record.title?.toString().slice(0, 40), 201, undefined]);
      ids.push(r.body.id);
    }

    const listed = await client.recall({ limit: 100 });
    expect(listed.status).toBe(200);
    expect(listed.body.map((hit: { id: string }) => hit.id)).toEqual([...ids].reverse());
    expect(listed.body.map(written)).toEqual([...records].reverse().map(asWritten));

    for (const [i, record] of records.entries()) {
      const found = await client.recall({ q: `worstcase${i + 1}` });
      expect(found.status).toBe(200);
      expect(found.body.map((hit: { id: string }) => hit.id)).toEqual([ids[i]]);
      expect(written(found.body[0])).toEqual(asWritten(record));
    }

    // The background classifier reads each record too, and its write back keeps the record as it was.
    const classified = await eventually(async () => {
      const { body } = await client.recall({ limit: 100 });
      return body.every((hit: { classification: unknown }) => hit.classification !== null) ? body : null;
    }, 15_000);
    expect(classified.map(written)).toEqual([...records].reverse().map(asWritten));
  }, 60_000);
});

describe('what could not be read back exactly is refused with 400', () => {
  test.each<[string, string, string]>([
    ['metadata 33 levels deep', withRaw('metadata', nestedJson(LIMITS.metadataDepth + 1)), 'metadata is nested deeper than 32 levels'],
    ['metadata 3 000 levels deep (once a 500)', withRaw('metadata', nestedJson(3000)), 'metadata is nested deeper than 32 levels'],
    ['metadata 150 000 levels deep (900 KB)', withRaw('metadata', nestedJson(150_000)), 'metadata is nested deeper than 32 levels'],
    ['a title that is an array 400 000 levels deep', withRaw('title', '['.repeat(400_000) + ']'.repeat(400_000)).replace('"title":"The user prefers dark mode",', ''), 'title must be a string'],
    ['an unknown field 150 000 levels deep', withRaw('extra', nestedJson(150_000)), 'unknown field: extra'],
    ['a __proto__ key in metadata', withRaw('metadata', '{"ok":1,"__proto__":{"admin":true}}'), 'metadata has the key "__proto__"'],
    ['a __proto__ field', withRaw('__proto__', '{"admin":true}'), 'unknown field: __proto__'],
    ['a number beyond a double', withRaw('metadata', '{"n":1e400}'), 'metadata has a number outside the range of a double'],
    ['an unpaired surrogate in the title', JSON.stringify(aRecord()).replace('dark mode', 'dark \\ud800 mode'), 'title is not well-formed Unicode'],
    ['an unpaired surrogate in a metadata key', withRaw('metadata', '{"\\udc00":1}'), 'metadata has a key that is not well-formed Unicode'],
    ['a title of no-break and zero-width spaces', JSON.stringify(aRecord({ title: '\u00a0\u200b' })), 'title is required and must be a non-blank string'],
  ])('%s', async (_, json, message) => {
    const r = await writeRaw('/api/v1/record', json);
    expect(r.status).toBe(400);
    expect(r.body.message).toContain(message);
  });

  test.each<[string, number[]]>([
    ['a byte that is never UTF-8 (0xff)', [0xff]],
    ['a truncated sequence (0xe2 0x82)', [0xe2, 0x82]],
    ['an overlong encoding of "/" (0xc0 0xaf)', [0xc0, 0xaf]],
    ['an encoded surrogate (0xed 0xa0 0x80)', [0xed, 0xa0, 0x80]],
  ])('a body with %s in a string is invalid_json, not stored with replacement characters', async (_, bytes) => {
    const writes: [string, Record<string, unknown>][] = [
      ['/api/v1/record', aRecord({ title: 'SPLIT' })],
      ['/v1/classify', { title: 'SPLIT', body: 'b' }],
    ];
    for (const [path, input] of writes) {
      const [before, after] = JSON.stringify(input).split('SPLIT') as [string, string];
      const r = await writeRaw(path, Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)]));
      expect([path, r.status, r.body]).toEqual([path, 400, { error: 'invalid_json', message: 'The request body is not valid UTF-8' }]);
    }
  });

  test('nothing refused was stored, and the service still answers', async () => {
    const { body } = await api.recall({ limit: 100 });
    expect(body.filter((hit: { title: string; metadata: unknown }) => hit.title !== 'The user prefers dark mode' || hit.metadata !== null)).toEqual([]);
    expect((await api.remember(aRecord())).status).toBe(201);
  });
});

describe('HEAD answers as GET does, without a body', () => {
  const head = (path: string) => api.request('HEAD', path);

  test('on the search, with its status and headers', async () => {
    const r = await head('/api/v1/query?q=dark');
    expect(r.status).toBe(200);
    expect(r.body).toBeUndefined();
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(Number(r.headers.get('content-length'))).toBeGreaterThan(1);
  });

  test('an error keeps its status and has no body either', async () => {
    expect((await new Client(svc.url, 'nope').request('HEAD', '/api/v1/query')).status).toBe(401);
    expect((await head('/api/v1/query?limit=0')).status).toBe(400);
  });

  test('the OpenAPI document, which needs no key', async () => {
    const r = await new Client(svc.url, null).request('HEAD', '/openapi.json');
    expect(r.status).toBe(200);
    expect(r.body).toBeUndefined();
  });

  test('a route that answers GET lists HEAD in Allow; one that answers POST does not', async () => {
    expect((await api.request('POST', '/api/v1/query', { body: {} })).headers.get('allow')).toBe('GET, HEAD');
    expect((await api.request('HEAD', '/api/v1/forget')).headers.get('allow')).toBe('POST');
    expect((await api.request('POST', '/api/v1/forget/x', { body: {} })).headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('idempotency compares the validated request', () => {
  test.each(['client', 'metadata'])('a null %s and an absent one are the same request: the retry replays', async (field) => {
    const key = { 'Idempotency-Key': `null-vs-absent-${field}-${Date.now()}` };
    const first = await api.remember(aRecord({ [field]: null, title: `null ${field}` }), key);
    const retry = await api.remember(aRecord({ title: `null ${field}` }), key);
    expect(first.status).toBe(201);
    expect([retry.status, retry.body, retry.headers.get('idempotent-replayed')]).toEqual([201, first.body, 'true']);
  });
});
