import { jsonValueProblem } from '../../shared/domain/json-value.js';
import { LIMITS, RECORD_TYPES } from '../../shared/domain/record.js';
import { isBlank, unpairedSurrogateAt } from '../../shared/domain/text.js';
import { CursorSealer } from '../../shared/domain/cursor-sealer.js';
import { encodeCursor, listRequest } from '../../shared/domain/listing.js';
import { parseClassifyInput, parseForgetInput, parseListParams, parseRecordInput, parseSearchParams } from '../../shared/domain/validation.js';

const valid = { agent_id: 'a', type: 'fact', title: 't', body: 'b' };

/** An object nested `levels` deep: `{"a": {"a": … 1}}`, the outer object being level 1. */
const nested = (levels: number): Record<string, unknown> => JSON.parse('{"a":'.repeat(levels) + '1' + '}'.repeat(levels));

function messageOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (e) {
    return (e as { code?: string }).code;
  }
}

describe('the message of a value of the wrong JSON type', () => {
  test('names the type it must be, with its article', () => {
    expect(messageOf(() => parseRecordInput({ ...valid, title: 5 }))).toBe('title must be a string');
    expect(messageOf(() => parseRecordInput({ ...valid, metadata: 'x' }))).toBe('metadata must be a JSON object');
    expect(messageOf(() => parseForgetInput({ ids: 'x' }))).toBe('ids must be an array');
  });
});

describe('record input', () => {
  test('a valid record passes, text unchanged', () => {
    const input = { ...valid, title: '  spaced  ', client: 'c', metadata: { a: [1] } };
    expect(parseRecordInput(input)).toEqual(input);
  });

  test.each(['agent_id', 'type', 'title', 'body'])('%s absent, null, empty or blank is missing_field', (field) => {
    for (const value of [undefined, null, '', '  ']) {
      expect(codeOf(() => parseRecordInput({ ...valid, [field]: value }))).toBe('missing_field');
    }
  });

  test('type outside the six is invalid_type and the message lists them', () => {
    try {
      parseRecordInput({ ...valid, type: 'note' });
      throw new Error('expected a failure');
    } catch (e) {
      expect((e as { code: string }).code).toBe('invalid_type');
      for (const t of RECORD_TYPES) expect((e as Error).message).toContain(t);
    }
  });

  test.each([
    [{ title: 5 }, 'invalid_field'],
    [{ agent_id: 'x'.repeat(257) }, 'invalid_field'],
    [{ title: '😀'.repeat(2048) }, undefined],
    [{ title: 'x'.repeat(2049) }, 'invalid_field'],
    [{ client: 'x'.repeat(257) }, 'invalid_field'],
    [{ client: 3 }, 'invalid_field'],
    [{ metadata: [] }, 'invalid_field'],
    [{ metadata: 'x' }, 'invalid_field'],
    [{ metadata: { s: 'x'.repeat(16384) } }, 'invalid_field'],
    [{ metdata: {} }, 'invalid_field'],
    [{ id: 'x' }, 'invalid_field'],
    [{ body: 'x'.repeat(65536) }, undefined],
    [{ body: 'x'.repeat(65537) }, 'body_too_large'],
    [{ body: 'é'.repeat(32769) }, 'body_too_large'],
  ])('%j -> %s', (override, code) => {
    expect(codeOf(() => parseRecordInput({ ...valid, ...override }))).toBe(code);
  });

  test('blank means no visible character: white space, no-break and zero-width spaces, controls, fillers', () => {
    for (const blank of ['\u00a0\u200b', '\u200b', '\ufeff', '\u3164', '\u2060\u180e', '\u0000', '\t\n\u2028', '\u034f\ufe0f']) {
      expect([blank, codeOf(() => parseRecordInput({ ...valid, title: blank }))]).toEqual([blank, 'missing_field']);
      expect(isBlank(blank)).toBe(true);
    }
    for (const visible of ['\u200ba', '.', '😀', '\u0301', '\u2800', '\ue000']) expect(isBlank(visible)).toBe(false);
  });

  test('text that UTF-8 cannot store (an unpaired surrogate) is refused in every field, with its position', () => {
    for (const field of ['agent_id', 'title', 'body', 'client']) {
      for (const bad of ['\ud800', 'a\udc00', 'x\ud83d', '\udc00\ud800']) {
        expect(codeOf(() => parseRecordInput({ ...valid, [field]: bad }))).toBe('invalid_field');
      }
    }
    expect(messageOf(() => parseRecordInput({ ...valid, title: 'ab\ud800' }))).toBe(
      'title is not well-formed Unicode: an unpaired surrogate (\\ud800) at position 2',
    );
    expect(parseRecordInput({ ...valid, title: 'pair 😀 ok' }).title).toBe('pair 😀 ok');
    expect([unpairedSurrogateAt('😀'), unpairedSurrogateAt('a\ud83d'), unpairedSurrogateAt('\ude00')]).toEqual([-1, 1, 0]);
  });

  test(`metadata nests at most ${LIMITS.metadataDepth} levels; deeper is invalid_field, however deep, without recursion`, () => {
    expect(parseRecordInput({ ...valid, metadata: nested(LIMITS.metadataDepth) }).metadata).toEqual(nested(LIMITS.metadataDepth));
    const arrays = { a: JSON.parse('['.repeat(LIMITS.metadataDepth - 1) + ']'.repeat(LIMITS.metadataDepth - 1)) };
    expect(codeOf(() => parseRecordInput({ ...valid, metadata: arrays }))).toBeUndefined();
    for (const levels of [LIMITS.metadataDepth + 1, 3000, 200_000]) {
      expect(messageOf(() => parseRecordInput({ ...valid, metadata: nested(levels) }))).toMatch(
        /^metadata is nested deeper than 32 levels \(at \/a(\/a){31}\)$/,
      );
    }
    expect(codeOf(() => parseRecordInput({ ...valid, metadata: { a: JSON.parse('['.repeat(40) + ']'.repeat(40)) } }))).toBe('invalid_field');
  });

  test('metadata must come back as sent: no __proto__ key, no number beyond a double, no unpaired surrogate', () => {
    const cases: [string, string][] = [
      ['{"__proto__":{"x":1}}', 'metadata has the key "__proto__", which JavaScript reads as the object\'s prototype (at /__proto__)'],
      ['{"a":[{"__proto__":1}]}', 'metadata has the key "__proto__", which JavaScript reads as the object\'s prototype (at /a/0/__proto__)'],
      ['{"n":1e400}', 'metadata has a number outside the range of a double (IEEE 754), such as 1e400 (at /n)'],
      ['{"n":[-1e999]}', 'metadata has a number outside the range of a double (IEEE 754), such as 1e400 (at /n/0)'],
      ['{"s":"\\ud800"}', 'metadata has a string that is not well-formed Unicode: an unpaired surrogate (\\ud800) at position 0 (at /s)'],
      ['{"k\\udfff":1}', 'metadata has a key that is not well-formed Unicode: an unpaired surrogate (\\udfff) at position 1 (at /k\ufffd)'],
      ['{"a/b~c":{"x":1e500}}', 'metadata has a number outside the range of a double (IEEE 754), such as 1e400 (at /a~1b~0c/x)'],
    ];
    for (const [json, message] of cases) {
      expect(messageOf(() => parseRecordInput({ ...valid, metadata: JSON.parse(json) }))).toBe(message);
    }
    // The first problem in document order is the one reported.
    expect(jsonValueProblem(JSON.parse('{"a":{"b":1e400},"__proto__":1}'), 32)?.pointer).toBe('/a/b');
    // Everything else that JSON has passes, exactly.
    const fine = { s: 'NUL \u0000 and 😀', n: [0, -0.5, 1e308, 5e-324], b: [true, false, null], o: {}, l: [], constructor: 'x', '': 1 };
    expect(parseRecordInput({ ...valid, metadata: fine }).metadata).toEqual(fine);
  });

  test('a body with a problem in an earlier field reports that field first, even when metadata is also too deep', () => {
    expect(codeOf(() => parseRecordInput({ ...valid, agent_id: '', metadata: nested(100_000) }))).toBe('missing_field');
  });

  test('unknown fields are reported before anything else', () => {
    expect(codeOf(() => parseRecordInput({ bogus: 1 }))).toBe('invalid_field');
  });

  test('classify takes a title and a body, and an agent_id and a type checked as on write; nothing else', () => {
    expect(parseClassifyInput({ title: 't', body: 'b' })).toEqual({ title: 't', body: 'b' });
    expect(codeOf(() => parseClassifyInput({ title: 't' }))).toBe('missing_field');
    expect(parseClassifyInput({ title: 't', body: 'b', agent_id: 'a', type: 'fact' })).toEqual({ title: 't', body: 'b', agent_id: 'a', type: 'fact' });
    expect(codeOf(() => parseClassifyInput({ title: 't', body: 'b', type: 'memo' }))).toBe('invalid_type');
    expect(codeOf(() => parseClassifyInput({ title: 't', body: 'b', agent_id: 3 }))).toBe('invalid_field');
    expect(codeOf(() => parseClassifyInput({ title: 't', body: 'b', client: 'c' }))).toBe('invalid_field');
  });
});

describe('search params', () => {
  test('limit defaults to 20 and accepts 1..100', () => {
    expect(parseSearchParams({}).limit).toBe(20);
    expect(parseSearchParams({ limit: '1' }).limit).toBe(1);
    expect(parseSearchParams({ limit: '100' }).limit).toBe(100);
  });

  test.each(['0', '101', 'abc', '2.5', '-1', '', ' 5', '1e2', '0x10'])('limit %p is invalid_limit', (limit) => {
    expect(codeOf(() => parseSearchParams({ limit }))).toBe('invalid_limit');
  });

  test('since, until and type are validated, unknown params ignored', () => {
    expect(codeOf(() => parseSearchParams({ since: 'soon' }))).toBe('invalid_since');
    expect(codeOf(() => parseSearchParams({ until: 'last week' }))).toBe('invalid_until');
    expect(parseSearchParams({ since: '2026-01-01', until: '2026-01-08T12:00:00+02:00' })).toMatchObject({
      since: '2026-01-01T00:00:00.000Z',
      until: '2026-01-08T10:00:00.000Z',
    });
    expect(codeOf(() => parseSearchParams({ type: 'note' }))).toBe('invalid_type');
    expect(parseSearchParams({ since: '2026-01-01', other: 'x' })).toEqual({ since: '2026-01-01T00:00:00.000Z', limit: 20, include_superseded: false, min_rank: 0 });
    expect(parseSearchParams({ include_superseded: 'true' }).include_superseded).toBe(true);
    expect(codeOf(() => parseSearchParams({ include_superseded: 'yes' }))).toBe('invalid_field');
  });
});

describe('dates: every instant from 0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z, and nothing else', () => {
  const FORMS = 'a date (YYYY-MM-DD) or an ISO 8601 date-time, from 0001-01-01 to 9999-12-31 UTC';

  test.each([
    ['0001-01-01', '0001-01-01T00:00:00.000Z'],
    ['0099-12-31', '0099-12-31T00:00:00.000Z'],
    ['0099-12-31T23:30:00-00:30', '0100-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
  ])('%s is %s in search, listing and forget', (given, instant) => {
    expect(parseSearchParams({ since: given }).since).toBe(instant);
    expect(parseSearchParams({ until: given }).until).toBe(instant);
    expect(parseListParams({ since: given, until: given })).toMatchObject({ since: instant, until: instant });
    expect(parseForgetInput({ before: given }).before).toBe(instant);
  });

  test.each(['0000-01-01', '0001-01-01T00:00:00+00:01', '9999-12-31T23:59:59-14:00', '9999-12-31T23:00-01:00', '10000-01-01', '+010000-01-01T00:00:00Z'])(
    '%s answers each field\'s error, which names the range',
    (given) => {
      expect(messageOf(() => parseSearchParams({ since: given }))).toBe(`since must be ${FORMS}`);
      expect(codeOf(() => parseSearchParams({ since: given }))).toBe('invalid_since');
      expect(codeOf(() => parseListParams({ since: given }))).toBe('invalid_since');
      expect(codeOf(() => parseListParams({ until: given }))).toBe('invalid_until');
      expect(messageOf(() => parseListParams({ until: given }))).toBe(`until must be ${FORMS}`);
      expect(codeOf(() => parseSearchParams({ until: given }))).toBe('invalid_until');
      expect(messageOf(() => parseSearchParams({ until: given }))).toBe(`until must be ${FORMS}`);
      expect(codeOf(() => parseForgetInput({ before: given }))).toBe('invalid_field');
      expect(messageOf(() => parseForgetInput({ before: given }))).toBe(`before must be ${FORMS}`);
    },
  );

  const tenant = '01900000-0000-7000-8000-000000000000';
  const sealer = new CursorSealer(Buffer.alloc(32, 7));
  const last = { created_at: '2026-11-10T12:00:00.000Z', id: '019a6d8a-8c00-7000-8000-000000000000' };

  test("a listing from 0001-01-01 to 9999-12-31T23:59:59.999Z pages on with its own cursor", () => {
    const first = listRequest(tenant, parseListParams({ since: '0001-01-01', until: '9999-12-31T23:59:59.999Z' }), sealer);
    const cursor = encodeCursor(tenant, first, last, sealer);
    expect(listRequest(tenant, parseListParams({ cursor }), sealer)).toEqual({ ...first, after: last });
  });

  test.each([
    ['a since before 0001', { since: '0000-12-31T23:59:59.999Z' }, last],
    ['a six-digit since', { since: '+010000-01-01T00:00:00.000Z' }, last],
    ['an until with an offset', { until: '2026-01-01T00:00:00.000+01:00' }, last],
    ['an until without milliseconds', { until: '2026-01-01T00:00:00Z' }, last],
    ['a position before 0001', {}, { ...last, created_at: '0000-06-01T00:00:00.000Z' }],
  ])('a cursor with %s, which the service never makes, is invalid_cursor', (_what, filters, position) => {
    const cursor = encodeCursor(tenant, { filters, order: 'desc' }, position, sealer);
    expect(codeOf(() => listRequest(tenant, parseListParams({ cursor }), sealer))).toBe('invalid_cursor');
  });
});
