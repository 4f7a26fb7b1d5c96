import { createHash } from 'node:crypto';

/** A cursor's payload, as a caller reads it from the cursor's first part (base64url JSON). */
export type CursorPayload = { v: number; f: Record<string, string>; o: string; p: [string, string] };

/**
 * What any caller could do to a cursor before cursors were sealed with a key: decode its payload, change it,
 * and seal it again with the old check, an unkeyed SHA-256 of its own tenant id and the payload (every caller
 * sees its tenant id: every 201 of a write and `GET /api/v1/usage` carry it). The service must refuse the result.
 */
export function resealUnkeyed(tenantId: string, cursor: string, change: (payload: CursorPayload) => CursorPayload = (p) => p): string {
  const [text] = cursor.split('.');
  const payload = JSON.parse(Buffer.from(text!, 'base64url').toString('utf8')) as CursorPayload;
  const forged = Buffer.from(JSON.stringify(change(payload))).toString('base64url');
  return `${forged}.${createHash('sha256').update(`${tenantId}\n${forged}`).digest('base64url').slice(0, 22)}`;
}

/** The cursor with the character at `index` replaced by another base64url character. */
export function flipCharacter(cursor: string, index: number): string {
  const c = cursor[index]!;
  const other = c === 'A' ? 'B' : c === '.' ? '_' : 'A';
  return cursor.slice(0, index) + other + cursor.slice(index + 1);
}
