/**
 * Properties of the whole request path, over real HTTP, on each backend (jest.config.js runs this suite on
 * SQLite and again in the AWS-shaped mode), with generated input a hostile client could send:
 * - any body, any query string: never a 5xx, always JSON of the documented shape, always within the bound;
 * - any record that is accepted reads back equal, field by field, through listing and through search;
 * - so does any record after any updates, and any record superseded by another (with its version,
 *   updated_at and superseded_by), through get, listing and search, with and without include_superseded;
 * - no search by one tenant returns another tenant's record, whatever its text and filters.
 *
 * `npm test` runs a fixed seed and a bounded number of runs. `npm run test:properties` runs 20 times as many
 * with a random seed; MEMORY_PROPERTY_SEED and MEMORY_PROPERTY_RUNS (a multiplier) override either. The seed
 * is printed first, and fast-check prints it again with the shrunk counterexample of any failure, so
 * `MEMORY_PROPERTY_SEED=<seed> npm run test:properties` replays it.
 */
import fc from 'fast-check';
import { LIMITS, RECORD_TYPES } from '../../shared/domain/record.js';
import { checkAnswer } from '../support/response-shapes.js';
import { startTestService, type TestService } from '../support/local-service.js';

/** The long run: npm names the script it runs in npm_lifecycle_event. */
const LONG = process.env.npm_lifecycle_event === 'test:properties';
const SEED = Number(process.env.MEMORY_PROPERTY_SEED ?? (LONG ? Math.floor(Math.random() * 2 ** 31) : 20261124));
/** How many times the bounded default number of runs to do. */
const SCALE = Number(process.env.MEMORY_PROPERTY_RUNS ?? (LONG ? 20 : 1));
const runs = (n: number): fc.Parameters<unknown> => ({ seed: SEED, numRuns: Math.max(1, Math.round(n * SCALE)) });
/** Every answer comes within the search deadline, the longest any request is documented to take (docs/api.md). */
const BOUND_MS = LIMITS.searchTimeoutMs;

let svc: TestService;
let other: { tenant_id: string; api_key: string };

beforeAll(async () => {
  process.stdout.write(`property seed ${SEED}, runs ×${SCALE}\n`);
  svc = await startTestService();
  other = await svc.newTenant({}, 'other');
});
afterAll(() => svc.stop());

/**
 * One character that UTF-8 can store, as a hostile client might send it: any code point, a NUL or a
 * control, invisible and special characters, JSON and FTS5 syntax, or a common word (so searches match).
 */
const storableChar = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 3, arbitrary: fc.constantFrom('\u0000', '\u001f', '\u007f', '\u00a0', '\u200b', '\ufeff', '\u2028', '\u202e', '\u0301', '😀', 'ﬁ') },
  { weight: 3, arbitrary: fc.constantFrom('"', '\\', '*', ':', '^', '(', ')', '-', ' AND ', ' NEAR ', ' OR ', "'", ';', '{', '}', '[', ']') },
  { weight: 6, arbitrary: fc.constantFrom(' dark ', ' mode ', ' user ', ' prefers ', ' running ', ' the ', ' tea ', ' berlin ', ' ') },
);
/** Any of those, or an unpaired surrogate, which no store can keep. */
const nastyChar = fc.oneof(
  { weight: 12, arbitrary: storableChar },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) },
);
const nastyText = (maxLength: number) => fc.string({ unit: nastyChar, maxLength });
const storableText = (minLength: number, maxLength: number) => fc.string({ unit: storableChar, minLength, maxLength });

/** A write a careless client might send: valid but for the odd blank field, with storable text of every kind. */
const plausibleRecord = fc.record(
  {
    agent_id: storableText(1, 12),
    type: fc.constantFrom(...RECORD_TYPES),
    title: storableText(1, 40),
    body: storableText(1, 120),
    client: fc.option(storableText(0, 12), { nil: null }),
    metadata: fc.option(fc.dictionary(storableText(0, 8), fc.jsonValue({ stringUnit: storableChar, maxDepth: 6 }), { maxKeys: 5 }), { nil: null }),
  },
  { requiredKeys: ['agent_id', 'type', 'title', 'body'] },
);

/** An update a careless client might send: any of the fields a PATCH takes (none at all, now and then), with storable text. */
const plausiblePatch = fc.record(
  {
    title: storableText(1, 40),
    body: storableText(1, 120),
    type: fc.constantFrom(...RECORD_TYPES),
    client: fc.option(storableText(0, 12), { nil: null }),
    metadata: fc.option(fc.dictionary(storableText(0, 8), fc.jsonValue({ stringUnit: storableChar, maxDepth: 4 }), { maxKeys: 4 }), { nil: null }),
  },
  { requiredKeys: [] },
);

/** JSON nested from a few levels to far past any limit, in objects, arrays or both. */
const deepJson = fc
  .tuple(fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1000, max: 120_000 })), fc.constantFrom('{"a":', '[', 'mixed'))
  .map(([levels, open]) => {
    const opens = Array.from({ length: levels }, (_, i) => (open === 'mixed' ? (i % 2 ? '[' : '{"a":') : open));
    return opens.join('') + '1' + opens.reverse().map((o) => (o === '[' ? ']' : '}')).join('');
  });

/** A record's JSON with one more field, given as JSON text. */
const withField = (record: object, field: string, json: string) => JSON.stringify(record).slice(0, -1) + `,${JSON.stringify(field)}:${json}}`;

/**
 * Any body at all, as JSON text (so a failure prints readably) or as bytes: plausible records, alone or
 * with one field replaced by anything or by deep nesting, any JSON value, or bytes that need not be UTF-8.
 */
const anyBody: fc.Arbitrary<string | Uint8Array> = fc.oneof(
  fc.tuple(plausibleRecord, fc.constantFrom('metadata', 'title', 'extra'), deepJson).map(([r, field, json]) => withField(r, field, json)),
  plausibleRecord.map((r) => JSON.stringify(r)),
  fc
    .tuple(plausibleRecord, fc.constantFrom('agent_id', 'type', 'title', 'body', 'client', 'metadata', 'id', '__proto__', 'limit'), fc.jsonValue({ stringUnit: nastyChar }))
    .map(([r, field, value]) => withField(r, field, JSON.stringify(value) ?? 'null')),
  fc.jsonValue({ stringUnit: nastyChar }).map((v) => JSON.stringify(v) ?? 'null'),
  fc.uint8Array({ maxLength: 200 }),
);

/** Percent-encodes the UTF-8 of a string (an unpaired surrogate becomes U+FFFD, as in any browser). */
const encode = (s: string) => Array.from(Buffer.from(s, 'utf8'), (b) => `%${b.toString(16).padStart(2, '0')}`).join('');
const anyQueryString = fc.oneof(
  fc
    .array(fc.tuple(fc.oneof(fc.constantFrom('q', 'agent_id', 'type', 'client', 'limit', 'since', 'include_superseded'), nastyText(6)), nastyText(30)), { maxLength: 6 })
    .map((pairs) => pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&')),
  fc.uint8Array({ maxLength: 60 }).map((bytes) => Array.from(bytes, (b) => `%${b.toString(16).padStart(2, '0')}`).join('')),
  fc.string({ unit: fc.constantFrom('a', '=', '&', '%', '+', 'q', '2', 'F', '#', '?', ' '), maxLength: 30 }).map((s) => s.replace(/[# ]/g, '')),
);

interface Answer {
  status: number;
  body: any;
  ms: number;
}

/** One request; the answer must be JSON of the documented shape, never a 5xx, within the bound. */
async function call(method: string, path: string, apiKey: string, body?: Buffer): Promise<Answer> {
  const started = performance.now();
  const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(svc.url + path, { method, headers, body });
  const text = await res.text();
  const ms = performance.now() - started;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${method} ${path} answered ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
  checkAnswer(method, path, res.status, res.headers, parsed);
  if (res.status >= 500) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  if (ms > BOUND_MS) throw new Error(`${method} ${path} took ${Math.round(ms)} ms, over the bound of ${BOUND_MS} ms`);
  return { status: res.status, body: parsed, ms };
}

async function search(apiKey: string, query: string): Promise<Answer> {
  await svc.backend.settle();
  return call('GET', `/api/v1/query?${query}`, apiKey);
}

/** The fields of a record as written, and as a search returns them. */
const fields = (r: Record<string, unknown>) => ({
  agent_id: r.agent_id,
  type: r.type,
  title: r.title,
  body: r.body,
  client: r.client ?? null,
  metadata: r.metadata ?? null,
});

describe('properties of the request path', () => {
  test('any body to a write or to classify: never a 5xx, JSON of the documented shape, within the bound', async () => {
    await fc.assert(
      fc.asyncProperty(anyBody, fc.constantFrom('/api/v1/record', '/v1/classify'), async (body, path) => {
        const answer = await call('POST', path, svc.tenant.api_key, Buffer.from(body));
        expect([200, 201, 400, 413, 415, 422].includes(answer.status)).toBe(true);
      }),
      runs(60),
    );
  });

  test('any body to an update: never a 5xx, JSON of the documented shape, within the bound', async () => {
    const id = (await call('POST', '/api/v1/record', svc.tenant.api_key, Buffer.from(JSON.stringify({ agent_id: 'patched', type: 'fact', title: 't', body: 'b' })))).body.id;
    await fc.assert(
      fc.asyncProperty(fc.oneof(anyBody, plausiblePatch.map((p) => JSON.stringify(p))), async (body) => {
        const answer = await call('PATCH', `/api/v1/record/${id}`, svc.tenant.api_key, Buffer.from(body));
        expect([200, 400, 413, 415].includes(answer.status)).toBe(true);
      }),
      runs(60),
    );
  });

  test('any query string to a search: never a 5xx, JSON of the documented shape, within the bound', async () => {
    await fc.assert(
      fc.asyncProperty(anyQueryString, async (query) => {
        const answer = await search(svc.tenant.api_key, query);
        expect([200, 400].includes(answer.status)).toBe(true);
      }),
      runs(60),
    );
  });

  test('every accepted record reads back equal, field by field, through listing and through search', async () => {
    let batch = 0;
    let generated = 0;
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(plausibleRecord, { minLength: 1, maxLength: 4 }), async (records) => {
        generated += records.length;
        // A word of its own in each title, and one agent for the batch, so each can be found alone.
        const agent = `roundtrip-${SEED}-${batch++}`;
        const written: { id: string; sent: Record<string, unknown> }[] = [];
        for (const [i, record] of records.entries()) {
          const tag = `rt${batch}x${i}w${SEED}`;
          const text = JSON.stringify({ ...record, agent_id: agent, title: `${tag} ${record.title}` });
          const answer = await call('POST', '/api/v1/record', svc.tenant.api_key, Buffer.from(text));
          if (answer.status === 201) written.push({ id: answer.body.id, sent: { ...(JSON.parse(text) as Record<string, unknown>), tag } });
          else expect(answer.status).toBe(400);
        }
        accepted += written.length;
        // By id: records written in the same millisecond have no order of their own on every backend.
        const byId = (a: [string, unknown], b: [string, unknown]) => (a[0] < b[0] ? -1 : 1);
        const listed = await search(svc.tenant.api_key, `agent_id=${encodeURIComponent(agent)}&limit=100`);
        expect(listed.body.map((hit: Record<string, unknown>) => [hit.id, fields(hit)]).sort(byId)).toEqual(
          written.map(({ id, sent }): [string, unknown] => [id, fields(sent)]).sort(byId),
        );
        for (const { id, sent } of written) {
          const found = await search(svc.tenant.api_key, `q=${sent.tag as string}`);
          expect(found.body.map((hit: Record<string, unknown>) => [hit.id, fields(hit)])).toEqual([[id, fields(sent)]]);
        }
      }),
      runs(15),
    );
    // Not vacuous: most generated records are valid (a body can be blank), so most were stored and read back.
    expect(accepted).toBeGreaterThan(generated * 0.8);
  });

  test('every record reads back equal after any updates and supersedes: by id, through listing and through search', async () => {
    let batch = 0;
    let updated = 0;
    let superseded = 0;
    const withVersion = (r: Record<string, unknown>) => ({ ...fields(r), version: r.version, updated_at: r.updated_at, superseded_by: r.superseded_by });
    const step = fc.record({ target: fc.nat(), patch: plausiblePatch });
    await fc.assert(
      fc.asyncProperty(fc.array(plausibleRecord, { minLength: 1, maxLength: 3 }), fc.array(step, { maxLength: 5 }), fc.option(fc.tuple(plausibleRecord, fc.array(fc.nat(), { maxLength: 3 }))), async (records, steps, superseding) => {
        const agent = `updated-${SEED}-${batch++}`;
        // What each stored record must read back as, kept by the test from what it sent and was answered.
        const model = new Map<string, Record<string, unknown>>();
        const tags = new Map<string, string>();
        const store = async (record: Record<string, unknown>, tag: string, extra: Record<string, unknown> = {}) => {
          const sent = { ...record, agent_id: agent, title: `${tag} ${record.title as string}`, ...extra };
          const answer = await call('POST', '/api/v1/record', svc.tenant.api_key, Buffer.from(JSON.stringify(sent)));
          if (answer.status !== 201) return expect(answer.status).toBe(400);
          model.set(answer.body.id, { ...fields(sent), version: 1, updated_at: null, superseded_by: null });
          tags.set(answer.body.id, tag);
        };
        for (const [i, record] of records.entries()) await store(record, `up${batch}x${i}w${SEED}`);
        const ids = [...model.keys()];
        for (const { target, patch } of ids.length > 0 ? steps : []) {
          const id = ids[target % ids.length]!;
          const sent = patch.title === undefined ? patch : { ...patch, title: `${tags.get(id)} ${patch.title}` };
          const answer = await call('PATCH', `/api/v1/record/${id}`, svc.tenant.api_key, Buffer.from(JSON.stringify(sent)));
          if (answer.status !== 200) {
            expect({ status: answer.status, error: answer.body.error }).toEqual({ status: 400, error: expect.stringMatching(/^(missing_field|invalid_field)$/) });
            continue;
          }
          const before = model.get(id)!;
          const after = { ...before, ...sent, version: (before.version as number) + 1, updated_at: answer.body.updated_at };
          expect(withVersion(answer.body)).toEqual(after);
          model.set(id, after);
          updated++;
        }
        if (superseding && ids.length > 0) {
          const [record, picks] = superseding;
          const named = [...new Set(picks.map((k) => ids[k % ids.length]!))];
          const newTag = `up${batch}xsw${SEED}`;
          await store(record, newTag, { supersedes: named });
          const newId = [...tags].find(([, tag]) => tag === newTag)?.[0];
          for (const id of newId === undefined ? [] : named) {
            model.set(id, { ...model.get(id)!, superseded_by: newId });
            superseded++;
          }
        }
        const byId = (a: [string, unknown], b: [string, unknown]) => (a[0] < b[0] ? -1 : 1);
        const expected = (current: boolean) =>
          [...model].filter(([, r]) => !current || r.superseded_by === null).sort(byId);
        for (const [id, want] of model) expect([id, withVersion((await call('GET', `/api/v1/record/${id}`, svc.tenant.api_key)).body)]).toEqual([id, want]);
        for (const include of [false, true]) {
          const flag = include ? '&include_superseded=true' : '';
          const page = await call('GET', `/api/v1/record?agent_id=${encodeURIComponent(agent)}&limit=100${flag}`, svc.tenant.api_key);
          expect(page.body.records.map((r: Record<string, unknown>) => [r.id, withVersion(r)]).sort(byId)).toEqual(expected(!include));
          const listed = await search(svc.tenant.api_key, `agent_id=${encodeURIComponent(agent)}&limit=100${flag}`);
          expect(listed.body.map((hit: Record<string, unknown>) => [hit.id, withVersion(hit)]).sort(byId)).toEqual(expected(!include));
          for (const [id, want] of model) {
            const found = await search(svc.tenant.api_key, `q=${tags.get(id)!}${flag}`);
            const shown = include || want.superseded_by === null;
            expect(found.body.map((hit: Record<string, unknown>) => [hit.id, withVersion(hit)])).toEqual(shown ? [[id, want]] : []);
          }
        }
      }),
      runs(12),
    );
    // Not vacuous: updates and supersedes happened.
    expect(updated).toBeGreaterThan(5);
    expect(superseded).toBeGreaterThan(2);
  });

  test("no search by one tenant ever returns another tenant's record", async () => {
    const shared = ['dark mode', 'the user prefers tea', 'running in berlin', 'mode'];
    const ids = new Map<string, Set<string>>([[svc.tenant.api_key, new Set()], [other.api_key, new Set()]]);
    // Both tenants hold records with the same words, agents and clients.
    for (const [key, owned] of ids) {
      for (const [i, words] of shared.entries()) {
        const record = { agent_id: `agent-${i % 2}`, type: RECORD_TYPES[i]!, title: words, body: words, client: `client-${i % 2}` };
        const answer = await call('POST', '/api/v1/record', key, Buffer.from(JSON.stringify(record)));
        owned.add(answer.body.id);
      }
    }
    const filters = fc.record(
      {
        q: fc.oneof(fc.constantFrom(...shared, 'dark OR mode', '"dark mode"', '*'), nastyText(20)),
        agent_id: fc.constantFrom('agent-0', 'agent-1'),
        client: fc.constantFrom('client-0', 'client-1'),
        type: fc.constantFrom(...RECORD_TYPES),
        limit: fc.integer({ min: 1, max: 100 }),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ids.keys()), filters, async (key, params) => {
        const query = Object.entries(params).map(([k, v]) => `${k}=${encode(String(v))}`).join('&');
        const answer = await search(key, query);
        expect(answer.status).toBe(200);
        const foreign = (answer.body as { id: string }[]).filter((hit) => !ids.get(key)!.has(hit.id));
        // The test tenant also holds the other tests' records; none of them is the other tenant's.
        const otherKey = [...ids.keys()].find((k) => k !== key)!;
        expect(foreign.filter((hit) => ids.get(otherKey)!.has(hit.id))).toEqual([]);
        if (key === other.api_key) expect(foreign).toEqual([]);
      }),
      runs(40),
    );
  });
});
