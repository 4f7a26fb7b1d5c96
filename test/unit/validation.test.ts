import { RECORD_TYPES } from '../../shared/domain/record.js';
import { parseClassifyInput, parseRecordInput, parseSearchParams } from '../../shared/domain/validation.js';

const valid = { agent_id: 'a', type: 'fact', title: 't', body: 'b' };

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (e) {
    return (e as { code?: string }).code;
  }
}

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

  test('unknown fields are reported before anything else', () => {
    expect(codeOf(() => parseRecordInput({ bogus: 1 }))).toBe('invalid_field');
  });

  test('classify takes exactly a title and a body', () => {
    expect(parseClassifyInput({ title: 't', body: 'b' })).toEqual({ title: 't', body: 'b' });
    expect(codeOf(() => parseClassifyInput({ title: 't' }))).toBe('missing_field');
    expect(codeOf(() => parseClassifyInput({ title: 't', body: 'b', agent_id: 'a' }))).toBe('invalid_field');
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

  test('since and type are validated, unknown params ignored', () => {
    expect(codeOf(() => parseSearchParams({ since: 'soon' }))).toBe('invalid_since');
    expect(codeOf(() => parseSearchParams({ type: 'note' }))).toBe('invalid_type');
    expect(parseSearchParams({ since: '2026-01-01', other: 'x' })).toEqual({ since: '2026-01-01T00:00:00.000Z', limit: 20 });
  });
});
