import { jest } from '@jest/globals';
import { Readable, Writable } from 'node:stream';
import { v7 as uuidv7 } from 'uuid';
import { checkLine, exportRecords, importRecords, ndjsonLines, OutputFailed } from '../../local/admin-records.js';
import { openSqliteAdapters, type SqliteAdapters } from '../../shared/adapters/local/index.js';
import { publicRecord, type StoredRecord } from '../../shared/domain/record.js';

/**
 * The admin CLI's record streams in process, on SQLite in memory: how an import reads and checks lines,
 * and how an export waits for its output. The commands as processes, on both backends, are in
 * test/e2e/admin-data.test.ts.
 */

let sqlite: SqliteAdapters;
let tenant: string;
beforeEach(async () => {
  sqlite = openSqliteAdapters(':memory:');
  tenant = (await sqlite.keys.createTenant({ name: 't', limits: { recordQuota: 1e6, queryQuota: 1e6, rate: 1, burst: 1 } })).tenant_id;
});
afterEach(() => sqlite.close());

const at = (ms: number) => new Date(Date.UTC(2024, 0, 1) + ms);

/** A record line as an export writes it. */
function line(ms: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: uuidv7({ msecs: at(ms).getTime() }),
    agent_id: 'bot',
    type: 'fact',
    title: `record ${ms}`,
    body: 'body',
    client: null,
    created_at: at(ms).toISOString(),
    metadata: null,
    classification: null,
    version: 1,
    updated_at: null,
    superseded_by: null,
    ...overrides,
  };
}

async function collect(input: Readable, maxBytes?: number) {
  const out = [];
  for await (const l of ndjsonLines(input, maxBytes)) out.push(l);
  return out;
}

describe('ndjsonLines', () => {
  test('splits at newlines across chunks, in the middle of a character too; drops \\r before \\n and a BOM on line 1', async () => {
    const bytes = Buffer.from('\ufeff{"a":"é"}\r\n\n{"b":"😀"}\nlast', 'utf8');
    // One byte a chunk: every split, inside a UTF-8 sequence included.
    const lines = await collect(Readable.from([...bytes].map((b) => Buffer.from([b]))));
    expect(lines).toEqual([
      { n: 1, text: '{"a":"é"}' },
      { n: 2, text: '' },
      { n: 3, text: '{"b":"😀"}' },
      { n: 4, text: 'last' },
    ]);
    expect(await collect(Readable.from([]))).toEqual([]);
  });

  test('a line that is not UTF-8 or too long is reported by number, and the next line is read', async () => {
    const input = Buffer.concat([Buffer.from('ok\n'), Buffer.from([0x61, 0xff, 0x62, 0x0a]), Buffer.from(`${'x'.repeat(100)}\nafter\n`)]);
    expect(await collect(Readable.from([input]), 50)).toEqual([
      { n: 1, text: 'ok' },
      { n: 2, problem: 'not UTF-8' },
      { n: 3, problem: 'longer than 50 bytes, which no record is' },
      { n: 4, text: 'after' },
    ]);
  });
});

describe('checkLine', () => {
  test('takes a record as an export writes it, metadata as parsed, its keys in their order', () => {
    const metadata = JSON.parse('{"z":{"x":1},"deep":{"list":[1,2.5,"ü"],"n":null}}');
    const given = line(5, {
      client: 'acme',
      metadata,
      classification: { type: 'decision', confidence: 0.5, model: 'linear-v3', classified_at: at(9).toISOString() },
    });
    const checked = checkLine(JSON.stringify(given));
    expect(checked).toEqual({ record: given });
    expect(Object.keys((checked as { record: StoredRecord }).record.metadata!)).toEqual(['z', 'deep']);
  });

  test('keeps version, updated_at and superseded_by; a line of an export made before them has version 1 and nulls', () => {
    const corrected = line(5, { version: 3, updated_at: at(40).toISOString(), superseded_by: line(6).id });
    expect(checkLine(JSON.stringify(corrected))).toEqual({ record: corrected });
    const current = line(5);
    const { version: _v, updated_at: _u, superseded_by: _s, ...older } = current;
    expect(checkLine(JSON.stringify(older))).toEqual({ record: current });
  });

  test.each([
    ['text that is not JSON', '{"id":', /^not JSON/],
    ['a version of 0', JSON.stringify(line(1, { version: 0 })), /^version: /],
    ['an updated_at that is no timestamp', JSON.stringify(line(1, { version: 2, updated_at: 'yesterday' })), /^updated_at: /],
    // What the service never writes: updated_at set on version 1, null past it, or before created_at.
    ['an updated_at on version 1', JSON.stringify(line(1, { version: 1, updated_at: at(40).toISOString() })), /^updated_at: .*, but version 1 is a record never updated/],
    ['no updated_at on version 2', JSON.stringify(line(1, { version: 2, updated_at: null })), /^updated_at: null, but version 2 is a record updated 1 times/],
    ['an updated_at before created_at', JSON.stringify(line(5, { version: 2, updated_at: at(1).toISOString() })), /^updated_at: .* is before created_at/],
    ['a record that supersedes itself', JSON.stringify(((r) => ({ ...r, superseded_by: r.id }))(line(1))), /^superseded_by: a record cannot supersede itself/],
    ['an array', '[]', /record: /],
    ['a tenant_id (an export has none)', JSON.stringify({ ...line(1), tenant_id: 'x' }), /tenant_id/],
    ['a field the API does not name', JSON.stringify({ ...line(1), rank: 1 }), /rank/],
    ['a missing field', JSON.stringify(line(1, { body: undefined })), /^body: /],
    ['created_at without milliseconds', JSON.stringify(line(1, { created_at: '2024-01-01T00:00:00Z' })), /^created_at: /],
    ['an id that is no UUID', JSON.stringify(line(1, { id: 'not-an-id' })), /^id: "not-an-id" is not a UUIDv7/],
    ['an id in upper case', JSON.stringify(line(1, { id: (line(1).id as string).toUpperCase() })), /is not a UUIDv7 in lowercase hex/],
    [
      'an id of another millisecond than created_at',
      JSON.stringify(line(1, { id: line(2).id })),
      /^id: .* was made at 2024-01-01T00:00:00\.002Z, not at created_at 2024-01-01T00:00:00\.001Z/,
    ],
    ['a blank title', JSON.stringify(line(1, { title: '   ' })), /^title: must not be blank/],
    ['a body over 64 KiB', JSON.stringify(line(1, { body: 'x'.repeat(65537) })), /^body: must be at most 65536 bytes/],
    ['metadata that is an array', JSON.stringify(line(1, { metadata: [1] })), /^metadata: /],
    // As on write: a key that JavaScript reads as the prototype would not come back as it went.
    ['metadata with a __proto__ key', JSON.stringify(line(1, { metadata: { a: 1 } })).replace('"a"', '"__proto__"'), /^metadata: has the key "__proto__"/],
    ['an unknown type', JSON.stringify(line(1, { type: 'memo' })), /^type: /],
    [
      'a confidence over 1',
      JSON.stringify(line(1, { classification: { type: 'fact', confidence: 2, model: 'm', classified_at: at(1).toISOString() } })),
      /^classification\.confidence: /,
    ],
  ])('refuses %s', (_what, text, problem) => {
    const checked = checkLine(text);
    expect('problem' in checked && checked.problem).toMatch(problem);
  });

  // A UUIDv7 holds the millisecond from 1970 on, and created_at has a four-digit year: 1970 to 9999, exactly.
  test.each(['1970-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z'])('takes a created_at of %s with the id of its millisecond', (createdAt) => {
    const given = line(0, { id: uuidv7({ msecs: Date.parse(createdAt) }), created_at: createdAt });
    expect(checkLine(JSON.stringify(given))).toEqual({ record: given });
  });

  test.each([
    ['1969-12-31T23:59:59.999Z', /^id: /],
    ['0001-01-01T00:00:00.000Z', /^id: /],
    ['0000-01-01T00:00:00.000Z', /^id: /],
    ['10000-01-01T00:00:00.000Z', /^created_at: /],
    ['+010000-01-01T00:00:00.000Z', /^created_at: /],
    ['9999-12-31T23:59:59.999+00:00', /^created_at: /],
  ])('refuses a created_at of %s', (createdAt, problem) => {
    const checked = checkLine(JSON.stringify(line(0, { created_at: createdAt })));
    expect('problem' in checked && checked.problem).toMatch(problem);
  });
});

describe('importRecords', () => {
  const read = (lines: string[]) => Readable.from([Buffer.from(lines.map((l) => `${l}\n`).join(''))]);

  test('imports in batches, reports each bad line with its number, and of two lines with one id keeps the first', async () => {
    const a = line(1);
    const b = line(2);
    const invalid: [number, string][] = [];
    const progress: string[] = [];
    const totals = await importRecords(
      sqlite.records,
      tenant,
      read([JSON.stringify(a), 'nope', '', JSON.stringify({ ...a, title: 'second' }), JSON.stringify(b)]),
      { invalidLine: (n, problem) => invalid.push([n, problem]), batchSize: 2, every: 2, progress: (t) => progress.push(t) },
    );
    expect(totals).toEqual({ imported: 2, skipped: 1, invalid: 1 });
    expect(invalid).toEqual([[2, expect.stringMatching(/^not JSON/)]]);
    expect(progress).toEqual([expect.stringMatching(/^import: 2 lines read/), expect.stringMatching(/^import: 4 lines read/)]);
    expect((await sqlite.records.get(tenant, a.id as string))?.title).toBe('record 1');
  });

  test('a store failure stops the import with what was done before it', async () => {
    const failing = { import: jest.fn(async () => Promise.reject(new Error('disk full'))) };
    const error = await importRecords(failing as never, tenant, read([JSON.stringify(line(1))]), { invalidLine: () => undefined }).catch((e) => e);
    expect(error).toMatchObject({ message: 'disk full', line: 1, totals: { imported: 0, skipped: 0, invalid: 0 } });
  });
});

describe('exportRecords', () => {
  /** `n` records, written newest first; every third one updated twice and superseded by the one after it, which a listing leaves out. */
  async function seed(n: number) {
    const records = Array.from({ length: n }, (_, i) => ({
      ...(line(n - i, i % 3 === 0 ? { version: 3, updated_at: at(100 + i).toISOString(), superseded_by: line(n - i + 1).id } : {}) as unknown as StoredRecord),
      tenant_id: tenant,
    }));
    await sqlite.records.import(tenant, records);
    return records;
  }

  test('writes every record oldest first, reading the next page only once the output has taken the last one', async () => {
    const records = await seed(7);
    let text = '';
    const out = new Writable({
      highWaterMark: 16,
      write(chunk, _encoding, done) {
        text += chunk;
        setTimeout(done, 5);
      },
    });
    const list = sqlite.records.list.bind(sqlite.records);
    const pending: number[] = [];
    jest.spyOn(sqlite.records, 'list').mockImplementation(async (t, request) => {
      pending.push(out.writableLength);
      return list(t, request);
    });
    const progress: string[] = [];
    expect(await exportRecords(sqlite.records, tenant, out, { pageSize: 3, every: 3, progress: (t) => progress.push(t) })).toBe(7);
    // Pages of 3, 3, 1, then an empty one; each read after the page before was written out.
    expect(pending).toEqual([0, 0, 0, 0]);
    expect(progress).toEqual(['export: 3 records written', 'export: 6 records written']);
    const expected = records.sort((x, y) => x.created_at.localeCompare(y.created_at)).map((r) => JSON.stringify(publicRecord(r)));
    expect(text.split('\n')).toEqual([...expected, '']);
  });

  test('an output that fails (a closed pipe) ends the export with its error', async () => {
    await seed(3);
    const out = new Writable({
      highWaterMark: 1,
      write(_chunk, _encoding, done) {
        done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    const error = await exportRecords(sqlite.records, tenant, out, { pageSize: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutputFailed);
    expect(error).toMatchObject({ message: 'the output failed: write EPIPE', cause: { code: 'EPIPE' } });
  });
});
