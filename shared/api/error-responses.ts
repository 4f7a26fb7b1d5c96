import { STATUS_CODES } from 'node:http';
import type { z } from 'zod';
import { ERROR_STATUS, type ErrorCode } from '../domain/errors.js';
import { LIMITS, SEARCH_LIMIT_RANGE } from '../domain/limits.js';
import { errorBodySchema } from '../domain/schemas.js';
import { headerRef, schemaRef, type JsonObject } from './json-schema.js';

/**
 * The error responses of the OpenAPI document: the codes an operation can answer with (its `errors` in the
 * registry, operations.ts, built from the groups below), grouped by their status in ERROR_STATUS, each
 * response listing its codes and when they are answered.
 */

/** When each code is answered, for the response descriptions (the table of docs/api.md). */
const WHEN = {
  invalid_json: 'the body is not valid JSON, or not a JSON object',
  missing_field: 'a required field is absent, null, or an empty or blank string; the message names it',
  invalid_field: 'a field has the wrong JSON type, is too long, or is not a known field; the message names it',
  invalid_type: '`type` is not one of the six values; the message lists them',
  body_too_large: `\`body\` is longer than ${LIMITS.bodyBytes} bytes in UTF-8`,
  invalid_limit: `\`limit\` is not an integer from ${SEARCH_LIMIT_RANGE}`,
  invalid_since: '`since` is not a date (`YYYY-MM-DD`) or an ISO 8601 date-time from 0001-01-01 to 9999-12-31 UTC',
  invalid_until: '`until` is not a date (`YYYY-MM-DD`) or an ISO 8601 date-time from 0001-01-01 to 9999-12-31 UTC',
  invalid_min_rank: '`min_rank` is not a number from 0 to 1',
  invalid_cursor: '`cursor` was not made by this service for this tenant and these filters',
  invalid_request: 'the request is not valid HTTP (answered by the HTTP layer)',
  unauthorized: 'no valid API key: a missing header, another scheme, an empty token, an unknown or a revoked key',
  forbidden: "the key is valid but may not do this: it lacks the operation's scope; the message names it",
  not_found: 'no operation has this path; or no record (or forget job) of the tenant has this id: unknown, malformed, deleted or another tenant\'s, one answer for all four',
  method_not_allowed: 'the path has an operation, but not for this method; `Allow` lists the methods it has',
  version_conflict: '`If-Match` names another version than the record has (its `ETag` is `"<version>"`); nothing changed',
  payload_too_large: `the request body is larger than ${LIMITS.requestBytes} bytes (1 MiB); it is refused before it is parsed`,
  uri_too_long: `the URL (path and query string) is longer than ${LIMITS.urlChars} characters (answered by the HTTP layer)`,
  unsupported_media_type: 'the Content-Type is not JSON',
  idempotency_key_reused: 'the `Idempotency-Key` was used within 24 hours for a different request',
  rate_limited: "the API key's rate limit is exceeded",
  query_quota_exceeded: "the tenant's monthly query quota is used up; `retry_after` counts the seconds to the next month (UTC)",
  headers_too_large: 'the request headers exceed 64 KiB (answered by the HTTP layer)',
  internal_error: 'anything unexpected; the body carries a `request_id` that is also in the log',
  overloaded: 'too many searches are waiting for the search engine; retry after `retry_after` seconds',
  search_timeout: `the search did not finish within the search deadline (${LIMITS.searchTimeoutMs / 1000} s unless configured otherwise); retry after \`retry_after\` seconds`,
  record_quota_exceeded: "the tenant's monthly record quota is used up",
} as const satisfies Record<ErrorCode, string>;

/** Codes Node's HTTP parser answers with, for a request it cannot read, before any route or operation. */
const HTTP_LAYER = ['invalid_request', 'uri_too_long', 'headers_too_large'] as const satisfies ErrorCode[];
/** Codes any request to an operation can meet before the operation runs, or whatever it does. */
export const EVERY_OPERATION = [...HTTP_LAYER, 'unauthorized', 'forbidden', 'rate_limited', 'internal_error'] as const satisfies ErrorCode[];
/** Codes of reading a JSON request body. */
export const JSON_BODY = ['invalid_json', 'payload_too_large', 'unsupported_media_type'] as const satisfies ErrorCode[];
/** Codes of routing: answered for a path or a method that has no operation, before authentication. */
const ROUTING = ['not_found', 'method_not_allowed'] as const satisfies ErrorCode[];

/** The Error schema narrowed to the codes of one response, with the fields its status always carries. */
function errorSchema(status: number, codes: readonly ErrorCode[]): JsonObject {
  type ErrorField = keyof z.output<typeof errorBodySchema>;
  const always: ErrorField[] = status === 429 || status === 503 ? ['retry_after'] : status === 500 ? ['request_id'] : [];
  const narrowed: JsonObject = { properties: { error: { enum: codes } }, ...(always.length > 0 ? { required: always } : {}) };
  return { allOf: [schemaRef(errorBodySchema), narrowed] };
}

/** The headers an error answer with this status carries, besides the request id. */
const ERROR_HEADERS: Record<number, string[]> = { 405: ['Allow'], 429: ['Retry-After'], 503: ['Retry-After'] };

/** One error response: its reason phrase and, for each code it can carry, when. */
function errorResponse(status: number, codes: readonly ErrorCode[]): JsonObject {
  const [only] = codes;
  const list =
    codes.length === 1 && only !== undefined
      ? `The \`error\` code is \`${only}\`: ${WHEN[only]}.`
      : `The \`error\` code is one of:\n\n${codes.map((code) => `- \`${code}\`: ${WHEN[code]}`).join('\n')}`;
  // The HTTP layer answers before the gateway has given the request an id.
  const identified = codes.some((code) => !(HTTP_LAYER as readonly ErrorCode[]).includes(code));
  const headers: JsonObject = identified ? { 'X-Request-Id': headerRef('X-Request-Id') } : {};
  for (const name of ERROR_HEADERS[status] ?? []) headers[name] = headerRef(name);
  return {
    description: `${STATUS_CODES[status]}. ${list}`,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: { 'application/json': { schema: errorSchema(status, codes) } },
  };
}

/** The error responses of an operation that can answer with `codes`, by status, ascending. */
export function errorResponses(codes: readonly ErrorCode[]): Record<string, JsonObject> {
  const groups = new Map<number, ErrorCode[]>();
  for (const code of Object.keys(ERROR_STATUS) as ErrorCode[]) {
    if (!codes.includes(code)) continue;
    const status = ERROR_STATUS[code];
    groups.set(status, [...(groups.get(status) ?? []), code]);
  }
  const sorted = [...groups].sort(([a], [b]) => a - b);
  return Object.fromEntries(sorted.map(([status, group]) => [String(status), errorResponse(status, group)]));
}

/** The routing errors as reusable responses (components.responses), named after their reason phrase. */
export function routingResponses(): Record<string, JsonObject> {
  return Object.fromEntries(
    ROUTING.map((code) => {
      const status = ERROR_STATUS[code];
      return [(STATUS_CODES[status] ?? String(status)).replace(/[^A-Za-z]/g, ''), errorResponse(status, [code])];
    }),
  );
}
