/**
 * The closed set of error codes the service answers with, and the one place that maps them to HTTP status.
 * The table follows the interface's decisions (with version 1.1's `uri_too_long` and version 1.2's
 * `version_conflict` and `invalid_min_rank`), as docs/api.md ("Errors") gives it, with
 * the additions: `invalid_request` and `headers_too_large` from the HTTP layer, and the two 503s that
 * bound a search, `overloaded` and `search_timeout`.
 */
export const ERROR_STATUS = {
  invalid_json: 400,
  missing_field: 400,
  invalid_field: 400,
  invalid_type: 400,
  body_too_large: 400,
  invalid_limit: 400,
  invalid_since: 400,
  invalid_until: 400,
  invalid_min_rank: 400,
  invalid_cursor: 400,
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  version_conflict: 412,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  rate_limited: 429,
  query_quota_exceeded: 429,
  headers_too_large: 431,
  internal_error: 500,
  overloaded: 503,
  search_timeout: 503,
  record_quota_exceeded: 507,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** An expected failure with a code from the closed list; exactly one middleware turns it into a response. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Seconds until the caller may retry; for the 429 and 503 codes. */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'AppError';
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/** The JSON body of an error response, as decisions.md shapes it. */
export interface ErrorBody {
  error: ErrorCode;
  message: string;
  retry_after?: number;
  request_id?: string;
}

/** Builds the JSON body for an AppError; 429 and 503 bodies carry `retry_after` (integer seconds, at least 1). */
export function errorBody(err: AppError): ErrorBody {
  const body: ErrorBody = { error: err.code, message: err.message };
  if (err.retryAfter !== undefined) body.retry_after = Math.max(1, Math.ceil(err.retryAfter));
  return body;
}
