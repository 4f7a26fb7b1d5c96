import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { CursorSealer } from '../../shared/domain/cursor-sealer.js';
import { AppError } from '../../shared/domain/errors.js';
import { encodeCursor, listRequest } from '../../shared/domain/listing.js';
import { parseListParams } from '../../shared/domain/validation.js';
import { flipCharacter, resealUnkeyed } from '../support/forged-cursor.js';

/** Listing cursors sealed with a key: what a caller who knows its tenant id and reads a cursor can and cannot do. */

const tenant = '01900000-0000-7000-8000-000000000000';
const other = '01900000-0000-7000-8000-000000000001';
const last = { created_at: '2026-11-10T12:00:00.000Z', id: '019a6d8a-8c00-7000-8000-000000000000' };
const sealer = new CursorSealer(randomBytes(32));
const request = { filters: { agent_id: 'x' }, order: 'asc' as const };
const cursor = encodeCursor(tenant, request, last, sealer);

/** The code of the AppError `fn` throws, or 'none'. */
function codeOf(fn: () => unknown): string {
  try {
    fn();
    return 'none';
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
}

const open = (c: string, tenantId = tenant, by = sealer) => listRequest(tenantId, parseListParams({ cursor: c }), by);

test('a cursor opens with the sealer that made it, for its tenant, and its tag is 128 bits', () => {
  expect(open(cursor)).toEqual({ ...request, limit: 20, after: last });
  expect(cursor.split('.')[1]).toMatch(/^[A-Za-z0-9_-]{22}$/);
});

test.each([
  ['the same payload', (p: any) => p],
  ['another position', (p: any) => ({ ...p, p: ['0001-01-01T00:00:00.000Z', last.id] })],
  ['other filters', (p: any) => ({ ...p, f: {} })],
  ['another order', (p: any) => ({ ...p, o: 'desc' })],
])('a cursor re-sealed by the caller with the unkeyed check (%s) is invalid_cursor', (_what, change) => {
  expect(codeOf(() => open(resealUnkeyed(tenant, cursor, change)))).toBe('invalid_cursor');
});

test("another tenant's cursor, and a cursor sealed with another key, are invalid_cursor", () => {
  expect(codeOf(() => open(cursor, other))).toBe('invalid_cursor');
  expect(codeOf(() => open(cursor, tenant, new CursorSealer(randomBytes(32))))).toBe('invalid_cursor');
});

test('a cursor with any one character changed, cut short or lengthened is invalid_cursor', () => {
  for (let i = 0; i < cursor.length; i++) expect({ i, code: codeOf(() => open(flipCharacter(cursor, i))) }).toEqual({ i, code: 'invalid_cursor' });
  for (const changed of [cursor.slice(0, -1), `${cursor}A`, `${cursor}.`, cursor.split('.')[0]!, `.${cursor.split('.')[1]}`]) {
    expect({ changed, code: codeOf(() => open(changed)) }).toEqual({ changed, code: 'invalid_cursor' });
  }
});

test('the same key seals the same way in another sealer: what a restart on the same data relies on', () => {
  const key = randomBytes(32);
  expect(open(encodeCursor(tenant, request, last, new CursorSealer(key)), tenant, new CursorSealer(Buffer.from(key)))).toMatchObject({ after: last });
});

test('a key shorter than 256 bits is refused; the key never shows in a log or in JSON', () => {
  expect(() => new CursorSealer(randomBytes(31))).toThrow(/31 bytes; it needs at least 32/);
  const key = Buffer.from('k'.repeat(40));
  const shown = new CursorSealer(key);
  expect(JSON.stringify(shown)).toBe('{}');
  expect(inspect(shown, { showHidden: true, depth: 5 })).not.toContain('k'.repeat(40));
});
