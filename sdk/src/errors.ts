import type { ErrorBody, ErrorCode } from './types.generated.js';

/**
 * The errors a MemoryClient call throws, and how a failed fetch is read: what it says, whether the request
 * can have reached the service, and whether a kept-alive connection was closed under it.
 */

/** Any failure of a call. */
export class MemoryError extends Error {
  override name = 'MemoryError';
}

/** The service answered with an error: `code` is the API's `error` (docs/api.md), `status` the HTTP status. */
export class MemoryApiError extends MemoryError {
  override name = 'MemoryApiError';

  constructor(
    readonly status: number,
    readonly code: ErrorCode | 'invalid_response',
    message: string,
    /** On 429 and 503: the seconds the service asked to wait. */
    readonly retryAfter?: number,
    /** On 500: the id to quote when reporting the problem. */
    readonly requestId?: string,
  ) {
    super(message);
  }
}

/**
 * A 403: the key may not make this request. The service answers `forbidden` when the key lacks the scope
 * the call needs (`read`, `write` or `delete`; the message names it) or is bound to an agent and the call
 * names another (the message names both). It is never retried: the same key is refused again. A
 * MemoryApiError, so `instanceof MemoryApiError` catches it as well.
 */
export class MemoryForbiddenError extends MemoryApiError {
  override name = 'MemoryForbiddenError';
}

/**
 * A 412 `version_conflict`: an update with `ifVersion` found the record at another version, because something
 * changed it since it was read. Nothing changed. Read the record again (`get`), decide, and update with its
 * new version. It is never retried. A MemoryApiError, so `instanceof MemoryApiError` catches it as well.
 */
export class MemoryVersionConflictError extends MemoryApiError {
  override name = 'MemoryVersionConflictError';
}

/** An attempt got no answer within `timeoutMs`. */
export class MemoryTimeoutError extends MemoryError {
  override name = 'MemoryTimeoutError';
}

/** The service could not be reached, or the connection failed before an answer came. */
export class MemoryConnectionError extends MemoryError {
  override name = 'MemoryConnectionError';
}

/**
 * The system codes of a connection that failed before the request was sent: the name did not resolve, or
 * nothing accepted the connection. Retrying such a failure cannot carry a request out twice.
 */
const NOT_SENT_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH']);

/** The error of an answer with an error status: a MemoryForbiddenError for every 403, a MemoryVersionConflictError for every 412, else a MemoryApiError. */
export function apiError(...args: ConstructorParameters<typeof MemoryApiError>): MemoryApiError {
  if (args[0] === 403) return new MemoryForbiddenError(...args);
  if (args[0] === 412) return new MemoryVersionConflictError(...args);
  return new MemoryApiError(...args);
}

/**
 * What a failed fetch says, with what it hides behind "fetch failed": the innermost cause's system code
 * (ECONNREFUSED, ENOTFOUND…) or, without one, its message. Duck-typed: fetch's errors may come from another
 * realm than this module's Error.
 */
export function describeFailure(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  let cause: string | undefined;
  for (const e of causeChain(error)) {
    const { code, message: inner } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string') cause = code;
    else if (e !== error && typeof inner === 'string') cause = inner;
  }
  const text = typeof message === 'string' ? message : String(error);
  return cause && !text.includes(cause) ? `${text}: ${cause}` : text;
}

/** An error and the causes it wraps, outermost first (each an object; the walk ends at the first that is not). */
function* causeChain(error: unknown): Generator<object> {
  for (let e = error; typeof e === 'object' && e !== null; e = (e as { cause?: unknown }).cause) yield e;
}

/**
 * Whether a fetch failed because the service closed a connection that had already carried answers (undici's
 * "other side closed" on a socket that had read bytes before): a kept-alive connection closed while idle.
 */
export function closedWhileIdle(error: unknown): boolean {
  for (const e of causeChain(error)) {
    const { code, socket } = e as { code?: unknown; socket?: { bytesRead?: unknown } };
    if (code === 'UND_ERR_SOCKET') return typeof socket?.bytesRead === 'number' && socket.bytesRead > 0;
  }
  return false;
}

/** True when a failed connection says that the request never left: no address, or the connection refused. */
export function notSent(error: MemoryConnectionError): boolean {
  for (const e of causeChain(error.cause)) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NOT_SENT_CODES.has(code)) return true;
  }
  return false;
}

/** Whether an answer's JSON is the API's error body. */
export function isErrorBody(value: unknown): value is ErrorBody {
  return typeof value === 'object' && value !== null && typeof (value as ErrorBody).error === 'string' && typeof (value as ErrorBody).message === 'string';
}
