/**
 * `PATCH /api/v1/record/{id}` (memory_update) over real HTTP, on each backend (decisions.md 1.2, "Updating a
 * record"): every field, null removing client and metadata, version and updated_at, the ETag of a get and of
 * an update, If-Match and its 412, every refusal, the quotas, and that search follows an update from its
 * 200 on, in the AWS-shaped mode too, with the stream held back so that the index is behind the table.
 */
import { aRecord, eventually, startTestService, TEST_BACKEND, type ApiResponse, type Client, type TestService } from '../support/local-service.js';

let svc: TestService;
let api: Client;

beforeAll(async () => {
  svc = await startTestService({}, { streamGate: true });
});
afterAll(() => svc.stop());
beforeEach(async () => {
  api = svc.client((await svc.newTenant()).api_key);
});

const ISO_MS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function write(overrides: Record<string, unknown> = {}, as = api): Promise<{ id: string; created_at: string }> {
  const r = await as.remember(aRecord(overrides));
  expect(r.status).toBe(201);
  return r.body;
}

const get = (id: string, as = api) => as.request('GET', `/api/v1/record/${id}`);
/** A record without its classification, which is the background worker's and may change at any moment. */
const fields = (record: Record<string, unknown>) => ({ ...record, classification: 'compared apart' });

function expectError(r: ApiResponse, status: number, error: string): void {
  expect({ status: r.status, error: r.body?.error }).toEqual({ status, error });
  expect(r.body.message).toEqual(expect.stringMatching(/\S/));
}

/** The ids of a search's hits, searching at once: no wait for the AWS-shaped index to catch up. */
async function searchNow(params: Record<string, string>, as = api): Promise<any[]> {
  const r = await as.request('GET', `/api/v1/query?${new URLSearchParams(params).toString()}`);
  expect(r.status).toBe(200);
  return r.body;
}

describe('an update changes the fields it names, and nothing else', () => {
  test.each<[string, Record<string, unknown>]>([
    ['title', { title: 'The user now prefers light mode' }],
    ['body', { body: 'Changed their mind in the second session.' }],
    ['type', { type: 'decision' }],
    ['client', { client: 'globex' }],
    ['metadata', { metadata: { source: 'chat', turns: [1, 2] } }],
    ['client: null removes it', { client: null }],
    ['metadata: null removes it', { metadata: null }],
    ['every field at once', { title: 'New title', body: 'New body.', type: 'signal', client: null, metadata: { a: 1 } }],
  ])('%s', async (_, patch) => {
    const w = await write({ client: 'acme', metadata: { source: 'setup' } });
    const before = (await get(w.id)).body;
    expect(before).toMatchObject({ version: 1, updated_at: null, superseded_by: null });

    const r = await api.update(w.id, patch);
    expect(r.status).toBe(200);
    expect(r.headers.get('etag')).toBe('"2"');
    expect(fields(r.body)).toEqual(fields({ ...before, ...patch, version: 2, updated_at: expect.stringMatching(ISO_MS_UTC) }));
    expect(Object.keys(r.body)).toEqual(Object.keys(before));
    expect(Date.parse(r.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(before.created_at));
    // A get and a listing answer the same record as the update did.
    const after = await get(w.id);
    expect(fields(after.body)).toEqual(fields(r.body));
    expect(after.headers.get('etag')).toBe('"2"');
    const listed = (await api.request('GET', '/api/v1/record')).body.records;
    expect(listed.map(fields)).toEqual([fields(r.body)]);
  });

  test('each update counts one more version; GET and HEAD send it as the ETag', async () => {
    const w = await write();
    expect((await get(w.id)).headers.get('etag')).toBe('"1"');
    let updatedAt = '';
    for (let version = 2; version <= 5; version++) {
      const r = await api.update(w.id, { body: `Revision ${version}.` });
      expect({ version: r.body.version, etag: r.headers.get('etag') }).toEqual({ version, etag: `"${version}"` });
      expect(r.body.updated_at >= updatedAt).toBe(true);
      updatedAt = r.body.updated_at;
    }
    const head = await fetch(`${svc.url}/api/v1/record/${w.id}`, { method: 'HEAD', headers: { authorization: `Bearer ${api.apiKey}` } });
    expect({ status: head.status, etag: head.headers.get('etag') }).toEqual({ status: 200, etag: '"5"' });
  });

  test('an update that sets a field to the value it had still counts a version', async () => {
    const w = await write({ title: 'Same title' });
    const r = await api.update(w.id, { title: 'Same title' });
    expect({ status: r.status, title: r.body.title, version: r.body.version, updated: r.body.updated_at !== null }).toEqual({ status: 200, title: 'Same title', version: 2, updated: true });
  });

  test('an id in capitals updates the same record; the answer gives it in lowercase', async () => {
    const w = await write();
    const r = await api.update(w.id.toUpperCase(), { title: 'Capitals' });
    expect({ status: r.status, id: r.body.id, title: r.body.title }).toEqual({ status: 200, id: w.id, title: 'Capitals' });
  });

  test('the classifier suggests a type again for the new text; the stored type stays the caller\'s', async () => {
    const w = await write({ type: 'fact', title: 'The user prefers dark mode' });
    await eventually(async () => (await get(w.id)).body.classification);
    const r = await api.update(w.id, { title: 'We decided to ship the release on Friday', body: 'Agreed by the whole team: we chose Friday.' });
    const reclassified = await eventually(async () => {
      const c = (await get(w.id)).body.classification;
      return c !== null && c.classified_at >= r.body.updated_at ? c : null;
    });
    expect(reclassified.type).toBe('decision');
    expect((await get(w.id)).body.type).toBe('fact');
  });
});

describe('If-Match', () => {
  test.each<[string, (version: number) => string]>([
    ['the current ETag', (v) => `"${v}"`],
    ['*', () => '*'],
    ['a list that holds the current ETag', (v) => `"${v + 7}", "${v}"`],
  ])('%s: 200', async (_, ifMatch) => {
    const w = await write();
    await api.update(w.id, { body: 'Second.' });
    const r = await api.update(w.id, { body: 'Third.' }, { 'if-match': ifMatch(2) });
    expect({ status: r.status, version: r.body.version }).toEqual({ status: 200, version: 3 });
  });

  test.each<[string, string]>([
    ['an older ETag', '"1"'],
    ['a newer ETag', '"3"'],
    ['a list without the current ETag', '"1", "3"'],
    ['the current ETag as a weak tag (never matches, as RFC 9110 says)', 'W/"2"'],
    ['the version unquoted', '2'],
    ['not an entity tag', 'garbage'],
  ])('%s: 412 version_conflict, and nothing changes', async (_, ifMatch) => {
    const w = await write();
    await api.update(w.id, { body: 'Second.' });
    const before = (await get(w.id)).body;
    const r = await api.update(w.id, { title: 'Never stored', client: null }, { 'if-match': ifMatch });
    expectError(r, 412, 'version_conflict');
    expect(fields((await get(w.id)).body)).toEqual(fields(before));
    expect(await searchNow({ q: 'never stored' })).toEqual([]);
  });

  test('an If-Match on an unknown record is 404, not 412', async () => {
    expectError(await api.update('01900000-0000-7000-8000-000000000000', { title: 'x' }, { 'if-match': '"1"' }), 404, 'not_found');
  });
});

describe('refusals', () => {
  test.each([
    ['an unknown id', '01900000-0000-7000-8000-000000000000'],
    ['a malformed id', 'not-an-id'],
    ['an id too long to be one', 'x'.repeat(300)],
  ])('%s is 404 not_found', async (_, id) => {
    const r = await api.update(encodeURIComponent(id), { title: 'x' });
    expect(r.body).toEqual({ error: 'not_found', message: 'No record with this id' });
    expect(r.status).toBe(404);
  });

  test("a deleted record, and another tenant's, are 404 as an unknown one is, and stay unchanged", async () => {
    const deleted = await write();
    expect((await api.request('DELETE', `/api/v1/record/${deleted.id}`)).status).toBe(200);
    expectError(await api.update(deleted.id, { title: 'x' }), 404, 'not_found');
    const theirs = await write({ title: 'Their record' }, svc.client(svc.tenant.api_key));
    const r = await api.update(theirs.id, { title: 'Taken over' });
    expect({ status: r.status, body: r.body }).toEqual({ status: 404, body: { error: 'not_found', message: 'No record with this id' } });
    expect((await get(theirs.id, svc.client(svc.tenant.api_key))).body).toMatchObject({ title: 'Their record', version: 1 });
  });

  test.each<[string, unknown, string]>([
    ['agent_id', { agent_id: 'agent-2' }, 'invalid_field'],
    ['agent_id beside a valid field', { title: 'x', agent_id: 'agent-1' }, 'invalid_field'],
    ['an unknown field', { titel: 'x' }, 'invalid_field'],
    ['version', { version: 9 }, 'invalid_field'],
    ['superseded_by', { superseded_by: null }, 'invalid_field'],
    ['supersedes', { supersedes: [] }, 'invalid_field'],
    ['an empty object', {}, 'missing_field'],
    // A field a PATCH names must be valid: title and body may be left out, never emptied.
    ['a blank title', { title: '  ' }, 'invalid_field'],
    ['a null title', { title: null }, 'invalid_field'],
    ['a blank body', { body: '\u200b' }, 'invalid_field'],
    ['a null type', { type: null }, 'invalid_type'],
    ['a title over 2048 characters', { title: 'x'.repeat(2049) }, 'invalid_field'],
    ['a body over 65536 bytes', { body: 'é'.repeat(32769) }, 'body_too_large'],
    ['a type not of the six', { type: 'memo' }, 'invalid_type'],
    ['a type of the wrong JSON type', { type: 5 }, 'invalid_type'],
    ['a client over 256 characters', { client: 'c'.repeat(257) }, 'invalid_field'],
    ['metadata that is an array', { metadata: [1] }, 'invalid_field'],
    ['metadata over 16384 bytes', { metadata: { a: 'm'.repeat(16384) } }, 'invalid_field'],
    ['metadata with an unpaired surrogate', { metadata: { a: '\ud800' } }, 'invalid_field'],
  ])('%s is 400 %s, and nothing changes', async (_, patch, error) => {
    const w = await write();
    const before = (await get(w.id)).body;
    expectError(await api.update(w.id, patch), 400, error);
    expect(fields((await get(w.id)).body)).toEqual(fields(before));
  });

  test.each<[string, string | Buffer, Record<string, string>, number, string]>([
    ['a body that is not JSON', '{"title": "x",', { 'content-type': 'application/json' }, 400, 'invalid_json'],
    ['a JSON array', '[{"title":"x"}]', { 'content-type': 'application/json' }, 400, 'invalid_json'],
    ['no body', '', { 'content-type': 'application/json' }, 400, 'invalid_json'],
    ['text/plain', '{"title":"x"}', { 'content-type': 'text/plain' }, 415, 'unsupported_media_type'],
    ['no Content-Type', '{"title":"x"}', {}, 415, 'unsupported_media_type'],
    ['a body over 1 MiB', Buffer.alloc(1024 * 1024 + 1, 0x61), { 'content-type': 'application/json' }, 413, 'payload_too_large'],
  ])('%s is %i %s', async (_, raw, headers, status, error) => {
    const w = await write();
    const res = await fetch(`${svc.url}/api/v1/record/${w.id}`, { method: 'PATCH', headers: { authorization: `Bearer ${api.apiKey}`, ...headers }, body: raw });
    expect({ status: res.status, error: ((await res.json()) as { error: string }).error }).toEqual({ status, error });
    expect((await get(w.id)).body.version).toBe(1);
  });
});

describe('quotas', () => {
  test('an update counts against no quota: a tenant whose record quota is used up still updates', async () => {
    const key = await svc.newTenant({ recordQuota: 1 });
    const own = svc.client(key.api_key);
    const w = await write({}, own);
    for (let i = 0; i < 3; i++) expect((await own.update(w.id, { body: `Update ${i}.` })).status).toBe(200);
    const month = new Date().toISOString().slice(0, 7);
    expect(await svc.backend.usage.list(month, key.tenant_id)).toEqual([expect.objectContaining({ records: 1 })]);
    expectError(await own.remember(aRecord()), 507, 'record_quota_exceeded');
  });

  test('an update counts against the rate limit', async () => {
    const key = await svc.newTenant({ rate: 1, burst: 2 });
    const own = svc.client(key.api_key);
    const w = await write({}, own);
    expect((await own.update(w.id, { body: 'One.' })).status).toBe(200);
    expectError(await own.update(w.id, { body: 'Two.' }), 429, 'rate_limited');
  });
});

/**
 * Where the record is when it is updated: just written, so that a search still reads its text from the
 * records table (the index's tail), or merged into the index, so that the update must change the index.
 */
const WHERE: [string, () => Promise<void>][] = [
  ['a record just written', () => svc.backend.settle()],
  ['a record merged into the index', () => svc.indexMerged()],
];

describe('search follows an update from its 200 on', () => {
  test.each(WHERE)('the new words find %s and the old ones no longer do, at once (on AWS, once the stream caught up)', async (_, place) => {
    const w = await write({ title: 'Quarterly zorblax review', body: 'Kept in the shared kestrel folder.' });
    const other = await write({ title: 'Another zorblax note', body: 'Unrelated.' });
    await place();
    const r = await api.update(w.id, { title: 'Quarterly quibbet review' });
    expect(r.status).toBe(200);
    // At once, without waiting for any index: the old word no longer finds it, on every backend.
    expect((await searchNow({ q: 'zorblax' })).map((h) => h.id)).toEqual([other.id]);
    if (TEST_BACKEND === 'sqlite') {
      expect((await searchNow({ q: 'quibbet' })).map((h) => ({ id: h.id, title: h.title, version: h.version }))).toEqual([
        { id: w.id, title: 'Quarterly quibbet review', version: 2 },
      ]);
    }
    // Once the AWS-shaped index has caught up, the new word finds it there too.
    const found = (await api.recall({ q: 'quibbet' })).body;
    expect(found.map((h: any) => ({ id: h.id, title: h.title, version: h.version }))).toEqual([{ id: w.id, title: 'Quarterly quibbet review', version: 2 }]);
    expect((await api.recall({ q: 'zorblax' })).body.map((h: any) => h.id)).toEqual([other.id]);
  });

  test.each(WHERE)('with the index behind the table, no hit of %s shows the old text or matches only an old word', async (_, place) => {
    const w = await write({ title: 'Kestrel plan alpha', body: 'Plan body wombat.' });
    await place();
    svc.stream?.hold();
    try {
      // Once the poller has met the held gate, nothing written after is indexed until release.
      await svc.stream?.nextHeldRead();
      const r = await api.update(w.id, { title: 'Kestrel plan bravo', body: 'Plan body numbat.' });
      expect(r.status).toBe(200);
      for (const q of ['alpha', 'wombat', 'kestrel plan', 'bravo numbat', '']) {
        for (const hit of await searchNow(q === '' ? {} : { q })) {
          if (hit.id !== w.id) continue;
          // A hit, where there is one, is the record as it is now, and matches a word it holds now.
          expect({ q, title: hit.title, body: hit.body, version: hit.version }).toEqual({ q, title: 'Kestrel plan bravo', body: 'Plan body numbat.', version: 2 });
          expect(['alpha', 'wombat']).not.toContain(q);
        }
      }
      // The words both versions hold still find it where the index holds it (SQLite always does).
      if (TEST_BACKEND === 'sqlite') expect((await searchNow({ q: 'kestrel' })).map((h) => h.id)).toEqual([w.id]);
      if (svc.stream) expect(svc.stream.heldReads).toBeGreaterThan(0);
    } finally {
      svc.stream?.release();
    }
    const settled = (await api.recall({ q: 'kestrel bravo' })).body;
    expect(settled.map((h: any) => [h.id, h.body])).toEqual([[w.id, 'Plan body numbat.']]);
    expect((await api.recall({ q: 'wombat' })).body).toEqual([]);
  });

  test('with the index behind the table, a record superseded a moment ago is left out at once, and shown superseded when asked for', async () => {
    const old = await write({ title: 'Lynx route north', client: 'acme' });
    await svc.backend.settle();
    svc.stream?.hold();
    try {
      await svc.stream?.nextHeldRead();
      const r = await api.remember(aRecord({ title: 'Lynx route south', client: 'acme', supersedes: [old.id] }));
      expect(r.status).toBe(201);
      const cases: Record<string, string>[] = [{ q: 'lynx' }, { q: 'north' }, {}, { client: 'acme' }];
      for (const params of cases) {
        expect((await searchNow(params)).map((h) => h.id)).not.toContain(old.id);
      }
      const all = await searchNow({ q: 'north', include_superseded: 'true' });
      expect(all.map((h) => [h.id, h.superseded_by])).toEqual([[old.id, r.body.id]]);
    } finally {
      svc.stream?.release();
    }
    expect((await api.recall({ q: 'lynx' })).body.map((h: any) => h.id)).toEqual([(await api.request('GET', '/api/v1/record')).body.records[0].id]);
  });

  test('an update of an earlier version never wins over a later one in the index', async () => {
    const w = await write({ title: 'Order check one' });
    for (const word of ['two', 'three', 'four']) expect((await api.update(w.id, { title: `Order check ${word}` })).status).toBe(200);
    const found = (await api.recall({ q: 'order check' })).body;
    expect(found.map((h: any) => [h.title, h.version])).toEqual([['Order check four', 4]]);
    for (const old of ['one', 'two', 'three']) expect((await api.recall({ q: old })).body).toEqual([]);
  });
});
