import { bearerToken, generateApiKey, generateKeyId, hashApiKey, isKeyId } from '../../shared/domain/api-key.js';
import { AppError, errorBody } from '../../shared/domain/errors.js';
import { readIdempotencyKey, requestHash } from '../../shared/domain/idempotency.js';
import { isQuotaMonth, quotaMonth, secondsToNextMonth } from '../../shared/domain/quota-month.js';
import { rankFromScore } from '../../shared/domain/rank.js';
import { deserializeRecord, newRecord, publicHit, publicRecord, serializeRecord, type SerializedRecord } from '../../shared/domain/record.js';
import { recordSchema, REQUIRED_FIELDS, searchHitSchema, storedRecordSchema } from '../../shared/domain/record-schema.js';
import { z } from 'zod';
import { codePoints, utf8Bytes } from '../../shared/domain/text.js';
import { parseSince } from '../../shared/domain/since.js';

describe('rank', () => {
  test('is the share of the best score the query could reach: score / best, in [0, 1], monotonic in the score', () => {
    expect(rankFromScore(0, 10)).toBe(0);
    expect(rankFromScore(-3, 10)).toBe(0);
    expect(rankFromScore(Number.NaN, 10)).toBe(0);
    expect(rankFromScore(3, 0)).toBe(0);
    expect(rankFromScore(3, Number.POSITIVE_INFINITY)).toBe(0);
    expect(rankFromScore(2.5, 10)).toBe(0.25);
    expect(rankFromScore(12, 10)).toBe(1);
    const scores = [0.001, 0.5, 1, 5, 9.99];
    const ranks = scores.map((s) => rankFromScore(s, 10));
    for (let i = 1; i < ranks.length; i++) expect(ranks[i]!).toBeGreaterThan(ranks[i - 1]!);
    for (const r of ranks) expect(r).toBeLessThan(1);
  });
});

describe('quota months', () => {
  test('the month is the UTC month', () => {
    expect(quotaMonth(new Date('2026-01-31T23:59:59.999Z'))).toBe('2026-01');
    expect(quotaMonth(new Date('2026-02-01T00:00:00.000+01:00'))).toBe('2026-01');
  });

  test('seconds to the next month, at least 1, across year ends', () => {
    expect(secondsToNextMonth(new Date('2026-12-31T23:59:00.000Z'))).toBe(60);
    expect(secondsToNextMonth(new Date('2026-02-28T00:00:00.000Z'))).toBe(86400);
    expect(secondsToNextMonth(new Date('2026-03-31T23:59:59.999Z'))).toBe(1);
  });

  test('YYYY-MM validation', () => {
    expect(isQuotaMonth('2026-11')).toBe(true);
    expect(isQuotaMonth('2026-13')).toBe(false);
    expect(isQuotaMonth('2026-1')).toBe(false);
  });
});

describe('since', () => {
  test.each([
    ['2026-01-05', '2026-01-05T00:00:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2026-01-05T10:20:30Z', '2026-01-05T10:20:30.000Z'],
    ['2026-01-05T10:20:30.5Z', '2026-01-05T10:20:30.500Z'],
    ['2026-01-05T10:20:30.123456Z', '2026-01-05T10:20:30.123Z'],
    ['2026-01-05T10:20:30+02:00', '2026-01-05T08:20:30.000Z'],
    ['2026-01-05T10:20-0130', '2026-01-05T11:50:00.000Z'],
    ['2026-01-05T10:20:30', '2026-01-05T10:20:30.000Z'],
    ['2026-01-05T10:20:30+02', '2026-01-05T08:20:30.000Z'],
    ['2026-01-05T10:20:30-0130', '2026-01-05T11:50:30.000Z'],
    // A `+` sent unencoded in a query string arrives as a space.
    ['2026-01-05T10:20:30 02:00', '2026-01-05T08:20:30.000Z'],
    ['2026-01-05T10:20:30.250 0100', '2026-01-05T09:20:30.250Z'],
  ])('%s is %s', (input, expected) => expect(parseSince(input)).toBe(expected));

  test.each(['', '2026-02-30', '2025-02-29', '2026-13-01', '26-01-01', '2026-01-05T25:00:00Z', '2026-01-05T10:61Z', 'yesterday', '1700000000', '2026-01-05T10:20:30+2', '2026-01-05T10:20:30+023', '2026-01-05T10:20:30  02:00', '2026-01-05T10:20:30 ', ' 2026-01-05', '2026-01-05T10:20:30+02:00:00'])(
    '%p is refused',
    (input) => expect(parseSince(input)).toBeNull(),
  );

  // Date.UTC reads the years 0 to 99 as 1900 to 1999; every year from 0001 is read as written.
  test.each([
    ['0001-01-01', '0001-01-01T00:00:00.000Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['0001-01-01T00:30+00:30', '0001-01-01T00:00:00.000Z'],
    ['0001-01-01T00:00:00-14:00', '0001-01-01T14:00:00.000Z'],
    ['0004-02-29', '0004-02-29T00:00:00.000Z'],
    ['0050-06-15T12:34:56.789Z', '0050-06-15T12:34:56.789Z'],
    ['0099-12-31', '0099-12-31T00:00:00.000Z'],
    ['0099-12-31T23:00:00-01:00', '0100-01-01T00:00:00.000Z'],
    ['0400-02-29', '0400-02-29T00:00:00.000Z'],
    ['1969-12-31T23:59:59.999Z', '1969-12-31T23:59:59.999Z'],
    ['9999-12-31', '9999-12-31T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['9999-12-31T23:59:59.999999999Z', '9999-12-31T23:59:59.999Z'],
    ['9999-12-31T23:59:59+00:00', '9999-12-31T23:59:59.000Z'],
    ['9999-12-31T23:59:59-00:00', '9999-12-31T23:59:59.000Z'],
    ['9999-12-31T23:59:59+14:00', '9999-12-31T09:59:59.000Z'],
  ])('%s is %s, exactly', (input, expected) => expect(parseSince(input)).toBe(expected));

  // Outside 0001-01-01T00:00:00.000Z … 9999-12-31T23:59:59.999Z, whether as written or once the offset is applied.
  test.each([
    '0000-01-01',
    '0000-12-31T23:59:59.999Z',
    '0001-01-01T00:00:00+00:01',
    '0001-01-01T13:59:59.999+14:00',
    '9999-12-31T23:59:59-14:00',
    '9999-12-31T23:00-01:00',
    '10000-01-01',
    '10000-01-01T00:00:00Z',
    '+010000-01-01T00:00:00.000Z',
    '-000001-01-01T00:00:00.000Z',
    '0100-02-29',
    '0050-02-29',
    '2026-01-05T10:20+24:00',
    '2026-01-05T10:20+05:60',
  ])('%p is refused', (input) => expect(parseSince(input)).toBeNull());

  test('what it returns is always in range, as it reads it again: four-digit years, UTC, milliseconds', () => {
    for (const input of ['0001-01-01T00:00+00:00', '0099-12-31T23:59:59.999-00:59', '9999-12-31T23:59:59.999Z', '2026-11-10']) {
      const out = parseSince(input)!;
      expect(out).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(parseSince(out)).toBe(out);
    }
  });
});

describe('API keys', () => {
  test('keys are random, prefixed, and hashed with SHA-256', () => {
    const a = generateApiKey();
    expect(a).toMatch(/^mem_[A-Za-z0-9_-]{43}$/);
    expect(generateApiKey()).not.toBe(a);
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(isKeyId(generateKeyId())).toBe(true);
    expect(isKeyId(a)).toBe(false);
  });

  test.each([
    ['Bearer abc', 'abc'],
    ['bearer abc', 'abc'],
    ['BEARER  abc ', 'abc'],
  ])('%p has the token', (header, token) => expect(bearerToken(header)).toBe(token));

  test.each([undefined, '', 'Bearer', 'Bearer ', 'Basic abc', 'abc', 'Bearer a b'])('%p has no token', (header) =>
    expect(bearerToken(header)).toBeNull(),
  );
});

describe('idempotency', () => {
  const write = { agent_id: 'a', type: 'fact', title: 't', body: 'b' } as const;

  test('the request hash ignores key order but not values', () => {
    const meta = (metadata: Record<string, unknown>) => requestHash({ ...write, metadata });
    expect(meta({ a: 1, b: { c: [1, 2], d: 'x' } })).toBe(meta({ b: { d: 'x', c: [1, 2] }, a: 1 }));
    expect(meta({ a: 1 })).not.toBe(meta({ a: 2 }));
    expect(meta({ a: [1, 2] })).not.toBe(meta({ a: [2, 1] }));
    expect(requestHash({ ...write, title: 'u' })).not.toBe(requestHash(write));
  });

  test('the request hash reads a null client or metadata as not given, as the API does', () => {
    expect(requestHash({ ...write, client: null, metadata: null })).toBe(requestHash(write));
    expect(requestHash({ ...write, client: undefined })).toBe(requestHash(write));
    expect(requestHash({ ...write, client: '' })).not.toBe(requestHash(write));
    expect(requestHash({ ...write, metadata: {} })).not.toBe(requestHash(write));
  });

  test('the header is optional, and bounded', () => {
    expect(readIdempotencyKey(undefined)).toBeUndefined();
    expect(readIdempotencyKey('k'.repeat(255))).toBe('k'.repeat(255));
    expect(() => readIdempotencyKey('k'.repeat(256))).toThrow(AppError);
    expect(() => readIdempotencyKey('')).toThrow(AppError);
  });
});

describe('records', () => {
  test('a new record gets a UUIDv7 id from the same millisecond as created_at', () => {
    const at = new Date('2026-11-21T10:00:00.123Z');
    const r = newRecord('t', { agent_id: 'a', type: 'fact', title: 't', body: 'b' }, at);
    expect(r.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(r.id.replace(/-/g, '').slice(0, 12), 16)).toBe(at.getTime());
    expect(r).toMatchObject({ created_at: '2026-11-21T10:00:00.123Z', client: null, metadata: null, classification: null });
  });

  const stored = {
    ...newRecord('t', { agent_id: 'a', type: 'fact', title: 'T', body: 'B', client: 'c', metadata: { deep: { n: [1, { m: null }] } } }, new Date('2026-11-21T10:00:00.123Z')),
    classification: { type: 'decision' as const, confidence: 0.5, model: 'm', classified_at: '2026-11-21T10:00:01.000Z' },
  };

  test('a new record is a stored record of the schema', () => {
    expect(storedRecordSchema.parse(stored)).toEqual(stored);
  });

  test('the API\'s record and search hit are the schemas\' fields in their order, without the tenant', () => {
    expect(Object.keys(publicRecord(stored))).toEqual(Object.keys(recordSchema.shape));
    expect(recordSchema.parse(publicRecord(stored))).toEqual(publicRecord(stored));
    const hit = publicHit({ ...stored, rank: 0.5 });
    expect(Object.keys(hit)).toEqual(Object.keys(searchHitSchema.shape));
    expect(hit).toEqual({ ...publicRecord(stored), rank: 0.5 });
  });

  test('the stored record is no component of the API: it has no meta id', () => {
    expect(z.globalRegistry.get(storedRecordSchema)?.id).toBeUndefined();
  });

  test('a serialized record comes back as it was, its absent optional fields as null', () => {
    const serialized = serializeRecord(stored);
    expect(serialized.metadata).toBe(JSON.stringify(stored.metadata));
    expect(deserializeRecord(JSON.parse(JSON.stringify(serialized)) as SerializedRecord)).toEqual(stored);
    const { client: _c, metadata: _m, classification: _k, ...bare } = serialized;
    expect(deserializeRecord({ ...bare, pk: 'extra' } as unknown as SerializedRecord)).toEqual({ ...stored, client: null, metadata: null, classification: null });
  });

  test('the fields a stored record always has are the ones its schema does not let be null', () => {
    expect(REQUIRED_FIELDS).toEqual(['id', 'tenant_id', 'agent_id', 'type', 'title', 'body', 'created_at', 'version']);
  });

  test('sizes count UTF-8 bytes and code points', () => {
    expect(utf8Bytes('é')).toBe(2);
    expect(codePoints('😀é')).toBe(2);
  });

  test('429 bodies carry an integer retry_after of at least 1', () => {
    expect(errorBody(new AppError('rate_limited', 'slow down', 0.2))).toEqual({ error: 'rate_limited', message: 'slow down', retry_after: 1 });
    expect(errorBody(new AppError('invalid_json', 'bad'))).toEqual({ error: 'invalid_json', message: 'bad' });
  });
});
