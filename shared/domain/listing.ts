import type { CursorSealer } from './cursor-sealer.js';
import { AppError } from './errors.js';
import { z } from 'zod';
import { LIMITS, RECORD_TYPES, type RecordType } from './record.js';
import { isInstant } from './since.js';
import type { ListParams } from './schemas.js';

/** The filters a listing (and an export) keeps records by; each absent one keeps every record. */
export interface RecordFilters {
  agent_id?: string | undefined;
  type?: RecordType | undefined;
  client?: string | undefined;
  /** ISO 8601 instant, UTC: keeps records created at or after it. */
  since?: string | undefined;
  /** ISO 8601 instant, UTC: keeps records created before it. */
  until?: string | undefined;
  /** True: superseded records too; absent, only the current ones (superseded_by null). */
  include_superseded?: true | undefined;
}

/** A place in a listing's order: a record's `created_at` and `id`. */
export interface Position {
  created_at: string;
  id: string;
}

/** One page of a listing, as a store reads it. */
export interface ListRequest {
  filters: RecordFilters;
  /** By `created_at`, then `id`: `desc` newest first, `asc` oldest first. */
  order: 'asc' | 'desc';
  limit: number;
  /** Only records strictly after this position in the order: the last record of the page before. */
  after?: Position | undefined;
}

/** True when `a` comes before `b` in ascending (`created_at`, `id`) order. */
export function positionBefore(a: Position, b: Position): boolean {
  return a.created_at < b.created_at || (a.created_at === b.created_at && a.id < b.id);
}

/** True when a record passes the filters. */
export function matchesFilters(record: Position & { agent_id: string; type: RecordType; client: string | null; superseded_by: string | null }, f: RecordFilters): boolean {
  return (
    (f.include_superseded === true || record.superseded_by === null) &&
    (f.agent_id === undefined || record.agent_id === f.agent_id) &&
    (f.type === undefined || record.type === f.type) &&
    (f.client === undefined || record.client === f.client) &&
    (f.since === undefined || record.created_at >= f.since) &&
    (f.until === undefined || record.created_at < f.until)
  );
}

const FILTER_KEYS = ['agent_id', 'type', 'client', 'since', 'until'] as const;

/**
 * The filters with only the keys that are set, in one fixed order, and `include_superseded` only when true:
 * what a cursor carries and compares.
 */
function canonicalFilters(params: { [K in (typeof FILTER_KEYS)[number]]?: RecordFilters[K] | null } & { include_superseded?: boolean | undefined }): RecordFilters {
  const filters: Record<string, string | true> = {};
  for (const key of FILTER_KEYS) {
    const value = params[key];
    if (value !== undefined && value !== null) filters[key] = value;
  }
  if (params.include_superseded === true) filters.include_superseded = true;
  return filters as RecordFilters;
}

interface CursorPayload {
  v: 1;
  f: RecordFilters;
  o: 'asc' | 'desc';
  p: [string, string];
}

/** An instant exactly as the service writes one (parseSince's form, as created_at has it), never another spelling. */
const instant = z.string().refine(isInstant);

const cursorPayloadSchema = z.strictObject({
  v: z.literal(1),
  f: z.strictObject({
    agent_id: z.string().optional(),
    type: z.enum(RECORD_TYPES).optional(),
    client: z.string().optional(),
    since: instant.optional(),
    until: instant.optional(),
    include_superseded: z.literal(true).optional(),
  }),
  o: z.enum(['asc', 'desc']),
  p: z.tuple([instant, z.string().max(LIMITS.recordIdChars)]),
});

/**
 * The cursor of the page after `last`, for this tenant, filters and order: its payload, then the sealer's
 * tag, which binds the payload to the tenant without saying which tenant it is. Opaque to callers.
 */
export function encodeCursor(tenantId: string, request: Pick<ListRequest, 'filters' | 'order'>, last: Position, sealer: CursorSealer): string {
  const payload: CursorPayload = { v: 1, f: canonicalFilters(request.filters), o: request.order, p: [last.created_at, last.id] };
  const text = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${text}.${sealer.seal(tenantId, text)}`;
}

const invalidCursor = (why: string) => new AppError('invalid_cursor', `cursor ${why}`);

function decodeCursor(tenantId: string, cursor: string, sealer: CursorSealer): CursorPayload {
  const [text, check, extra] = cursor.split('.');
  if (text === undefined || check === undefined || extra !== undefined || !sealer.verifies(tenantId, text, check)) {
    throw invalidCursor(
      'was not made by this service for this tenant, or was sealed with a key the service no longer has: pass the next_cursor of a page as it came, or start again from the first page',
    );
  }
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    payload = null;
  }
  const parsed = cursorPayloadSchema.safeParse(payload);
  if (!parsed.success) throw invalidCursor('is malformed: pass the next_cursor of a page as it came');
  return parsed.data as CursorPayload;
}

/**
 * The page a listing's query string asks for. Without a cursor: the first page of its filters and order.
 * With one: the page after the cursor's position, with the cursor's filters and order; the query string may
 * repeat them or name none of them, and anything else is 400 `invalid_cursor`, since a cursor's position
 * means nothing under other filters. A cursor whose tag `sealer` does not verify (altered, another tenant's,
 * or sealed with another key) is 400 `invalid_cursor` too.
 */
export function listRequest(tenantId: string, params: ListParams, sealer: CursorSealer): ListRequest {
  const given = canonicalFilters(params);
  if (params.cursor === undefined) return { filters: given, order: params.order ?? 'desc', limit: params.limit };
  const cursor = decodeCursor(tenantId, params.cursor, sealer);
  const named = Object.keys(given).length > 0;
  if (named && JSON.stringify(given) !== JSON.stringify(cursor.f)) {
    throw invalidCursor('was made for other filters: send the filters of the first page again, or none');
  }
  if (params.order !== undefined && params.order !== cursor.o) throw invalidCursor(`was made for order=${cursor.o}`);
  return { filters: cursor.f, order: cursor.o, limit: params.limit, after: { created_at: cursor.p[0], id: cursor.p[1] } };
}
