/**
 * The TypeScript client of the agent memory service. It has no dependencies: it uses `fetch`, `AbortSignal`
 * and `crypto.randomUUID`, so it runs in Node 20 and later and in browsers. Its types are generated from
 * the API's schemas (types.generated.ts).
 */
import type {
  ClassifyInput,
  DeletedRecord,
  ForgetAccepted,
  ForgetInput,
  ForgetJob,
  ForgetResult,
  ListQuery,
  RecallQuery,
  UsageQuery,
  Record as MemoryRecord,
  RecordInput,
  RecordPage,
  RecordPatch,
  RecordReceipt,
  SearchHit,
  Suggestion,
  Usage,
} from './types.generated.js';
import { OPERATIONS } from './types.generated.js';
import {
  apiError,
  closedWhileIdle,
  describeFailure,
  isErrorBody,
  MemoryApiError,
  MemoryConnectionError,
  MemoryTimeoutError,
  MemoryVersionConflictError,
  notSent,
} from './errors.js';

export {
  MemoryApiError,
  MemoryConnectionError,
  MemoryError,
  MemoryForbiddenError,
  MemoryTimeoutError,
  MemoryVersionConflictError,
} from './errors.js';

export { RECORD_TYPES } from './types.generated.js';
export type {
  Classification,
  ClassifyInput,
  DeletedRecord,
  ErrorBody,
  ErrorCode,
  ForgetAccepted,
  ForgetInput,
  ForgetJob,
  ForgetResult,
  ListQuery,
  RecallQuery,
  UsageQuery,
  Record,
  RecordInput,
  RecordPage,
  RecordPatch,
  RecordReceipt,
  RecordType,
  SearchHit,
  Suggestion,
  Usage,
} from './types.generated.js';
/** A stored record (the generated `Record`), under a name that does not hide TypeScript's own `Record<K, V>`. */
export type { MemoryRecord };

export interface MemoryClientOptions {
  /** The service's base URL: `http://127.0.0.1:8787` locally, or the API Gateway stage URL. */
  baseUrl: string;
  /** An API key (`mem_…`); it decides the tenant. */
  apiKey: string;
  /** How long one attempt may take before it fails with MemoryTimeoutError. Default 10 000 ms. */
  timeoutMs?: number;
  /** How many times a call is retried after `429 rate_limited`, a 503 of a busy search, or a failed connection. Default 3; 0 turns retries off. */
  maxRetries?: number;
  /** A `retry_after` longer than this is not waited for: the 429 is thrown instead. Default 30 000 ms. */
  maxRetryDelayMs?: number;
  /** The fetch to use; the global one by default. */
  fetch?: Fetch;
}

/**
 * What the client asks of fetch, and reads of its answer: the global fetch is one, and so is any function
 * that sends these requests and answers these fields (a test double, or a transport of one's own).
 */
export type Fetch = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal: AbortSignal },
) => Promise<{ status: number; ok: boolean; headers: { get(name: string): string | null }; text(): Promise<string> }>;

export interface CallOptions {
  /** Cancels the call, including any wait before a retry. */
  signal?: AbortSignal;
}

export interface RememberOptions extends CallOptions {
  /**
   * Makes the write safe to repeat for 24 hours: the same key and record answer the first write's receipt.
   * By default each `remember` call makes its own key and reuses it for its retries, so a retry never
   * stores a record twice.
   */
  idempotencyKey?: string;
}

export interface UpdateOptions extends CallOptions {
  /**
   * Makes the update conditional: it applies only while the record is at this version (as `get` answered it),
   * sent as `If-Match: "<version>"`. Another version throws a MemoryVersionConflictError and changes nothing.
   */
  ifVersion?: number;
}

/** An operation of the API, by its operationId. */
type OperationId = keyof typeof OPERATIONS;

/** A call of one operation, before it is sent. */
interface Call {
  operation: OperationId;
  /** The value of each of the path's parameters (`{id}`), to be encoded as one path segment. */
  params?: { [name: string]: string };
  /** The query string's parameters; those undefined or null are left out. */
  query?: object;
  body?: unknown;
  headers?: { [name: string]: string };
  signal?: AbortSignal | undefined;
  /**
   * False for a call that must not be carried out twice and has no idempotency key (a delete, a forget): a
   * failed connection is then retried only when the request cannot have reached the service.
   */
  repeatable?: boolean;
  /**
   * For a conditional write retried after a lost answer, whose repeat answers 412: the answer of the lost
   * attempt when the service's state shows that it was applied, else undefined (the 412 is thrown).
   */
  appliedBefore?: () => Promise<unknown>;
}

/** A call as it goes out: its operation's method, and the path with its parameters and query string. */
type Request = Omit<Call, 'operation' | 'params' | 'query'> & { method: string; path: string };

/**
 * The errors that ask the caller to come back shortly, with a `retry_after`: the key's rate limit, and the
 * two 503s of a search that met a busy service. Neither changed anything, so repeating the call is safe.
 */
const RETRIED_CODES: ReadonlySet<string> = new Set(['rate_limited', 'overloaded', 'search_timeout']);

/** A client of one service with one API key. */
export class MemoryClient {
  readonly #baseUrl: string;
  readonly #apiKey: string;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  readonly #maxRetryDelayMs: number;
  readonly #fetch: Fetch;

  constructor(options: MemoryClientOptions) {
    const url = new URL(options.baseUrl); // throws on a malformed URL, here rather than at the first call
    if (!options.apiKey) throw new TypeError('MemoryClient: apiKey is required');
    this.#baseUrl = url.href.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#maxRetries = options.maxRetries ?? 3;
    this.#maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** Stores a record (`POST /api/v1/record`, the `memory_remember` operation) and answers its receipt. */
  remember(record: RecordInput, options: RememberOptions = {}): Promise<RecordReceipt> {
    const idempotencyKey = options.idempotencyKey ?? globalThis.crypto.randomUUID();
    return this.#call({ operation: 'memory_remember', body: record, headers: { 'Idempotency-Key': idempotencyKey }, signal: options.signal });
  }

  /** Searches the tenant's records (`GET /api/v1/query`, `memory_recall`), best first. */
  recall(query: RecallQuery = {}, options: CallOptions = {}): Promise<SearchHit[]> {
    return this.#call({ operation: 'memory_recall', query, signal: options.signal });
  }

  /**
   * One record by id (`GET /api/v1/record/{id}`, `memory_get`). An id that is unknown, malformed, deleted or
   * another tenant's throws a MemoryApiError with status 404 and code `not_found`, like every other error
   * of the API (rather than answering null, which would also hide a wrong base URL's 404).
   */
  async get(id: string, options: CallOptions = {}): Promise<MemoryRecord> {
    return this.#call({ operation: 'memory_get', params: { id: recordId(id) }, signal: options.signal });
  }

  /**
   * One page of a listing (`GET /api/v1/record`, `memory_list`): `{records, next_cursor}`, newest first
   * unless `order: 'asc'`. For the next page pass `next_cursor` as `cursor`, with the same filters or none
   * (other filters are 400 `invalid_cursor`); `next_cursor` is null on the last page.
   */
  listPage(query: ListQuery = {}, options: CallOptions = {}): Promise<RecordPage> {
    return this.#call({ operation: 'memory_list', query, signal: options.signal });
  }

  /**
   * Every record the listing's filters keep, across all its pages, in its order: an async iterator that asks
   * for the next page (with the same filters and the page's cursor) only when the records of the one before
   * are used up, so it holds one page at a time. `limit` is the page size (1 to 100, default 20); a `cursor`
   * starts after that page. Each page is one call, with the retries of any call; a failure is thrown from
   * the loop that reads it.
   *
   * ```ts
   * for await (const record of memory.list({ agent_id: 'support-bot', order: 'asc' })) console.log(record.title);
   * ```
   */
  async *list(query: ListQuery = {}, options: CallOptions = {}): AsyncGenerator<MemoryRecord, void, undefined> {
    let cursor = query.cursor;
    for (;;) {
      const page = await this.listPage(cursor === undefined ? query : { ...query, cursor }, options);
      yield* page.records;
      if (page.next_cursor === null) return;
      cursor = page.next_cursor;
    }
  }

  /**
   * Changes the fields `patch` names (`PATCH /api/v1/record/{id}`, `memory_update`; at least one of `title`,
   * `body`, `type`, `client`, `metadata`; `client: null` and `metadata: null` remove the field) and answers the
   * whole record, one version more, with `updated_at` set. With `ifVersion` it applies only while the record
   * is at that version, else it throws a MemoryVersionConflictError and changes nothing. An unknown id, or
   * another agent's record for a key bound to an agent, throws `not_found` (404).
   *
   * Retries: a conditional update (`ifVersion`) is retried like a read after a failed connection, since a
   * repeat cannot apply twice; when the lost attempt had been applied, the repeat's 412 is recognised (the
   * record is at `ifVersion + 1` with the patch's fields) and the record answered. An update without
   * `ifVersion` is retried only when the request never left: a repeat would count one more version.
   */
  async update(id: string, patch: RecordPatch, options: UpdateOptions = {}): Promise<MemoryRecord> {
    const { ifVersion, signal } = options;
    const path = { id: recordId(id) };
    if (ifVersion === undefined) return this.#call({ operation: 'memory_update', params: path, body: patch, signal, repeatable: false });
    if (!Number.isSafeInteger(ifVersion) || ifVersion < 1) throw new TypeError('MemoryClient.update: ifVersion must be an integer of 1 or more');
    return this.#call({
      operation: 'memory_update',
      params: path,
      body: patch,
      headers: { 'If-Match': `"${ifVersion}"` },
      signal,
      appliedBefore: async () => {
        const record = await this.get(id, { signal }).catch(() => null);
        return record !== null && record.version === ifVersion + 1 && holdsPatch(record, patch) ? record : undefined;
      },
    });
  }

  /**
   * Deletes one record (`DELETE /api/v1/record/{id}`, `memory_delete`) and answers `{id, deleted_at}`. An id
   * that names no record of the tenant, or one already deleted, throws a MemoryApiError `not_found` (404).
   */
  async delete(id: string, options: CallOptions = {}): Promise<DeletedRecord> {
    return this.#call({ operation: 'memory_delete', params: { id: recordId(id) }, signal: options.signal, repeatable: false });
  }

  /**
   * Deletes every record that matches all the selectors given (`POST /api/v1/forget`, `memory_forget`; at
   * least one of `agent_id`, `client`, `type`, `before`, `ids`), or with `dry_run: true` only counts them.
   * Answers `{matched, deleted, dry_run}` when the service finished within the request, or
   * `{job_id, matched}` when it runs the forget as a job (on AWS, for a large forget): the matched records
   * are hidden from every read at once, and `forgetStatus(job_id)` follows the job. Tell them apart with
   * `'job_id' in outcome`. `ids` may be any array (the generated type asks for a non-empty tuple); an empty
   * one is the API's 400.
   */
  forget(input: Omit<ForgetInput, 'ids'> & { ids?: readonly string[] }, options: CallOptions = {}): Promise<ForgetResult | ForgetAccepted> {
    return this.#call({ operation: 'memory_forget', body: input, signal: options.signal, repeatable: input.dry_run === true });
  }

  /** The state of a forget job (`GET /api/v1/forget/{job_id}`): `{status: running | done | failed, matched, deleted}`. */
  async forgetStatus(jobId: string, options: CallOptions = {}): Promise<ForgetJob> {
    if (jobId === '') throw new TypeError('MemoryClient.forgetStatus: jobId must not be empty');
    return this.#call({ operation: 'memory_forget_status', params: { job_id: jobId }, signal: options.signal });
  }

  /** Suggests a type for a title and a body (`POST /v1/classify`, `memory_classify`); stores nothing. */
  classify(input: ClassifyInput, options: CallOptions = {}): Promise<Suggestion> {
    return this.#call({ operation: 'memory_classify', body: input, signal: options.signal });
  }

  /**
   * The tenant's use of the current UTC month (`GET /api/v1/usage`, `memory_usage`): records written and
   * searches answered, each as `{used, quota, remaining}`, and the calling key's `rate_limit`
   * (`{rate, burst}`); with `{ include: 'key' }`, also what the calling key may do (`key`). It counts
   * against neither quota; like every read it is retried on 429 and on a failed connection.
   */
  usage(query: UsageQuery & { include: 'key' }, options?: CallOptions): Promise<Usage & Required<Pick<Usage, 'key'>>>;
  usage(query?: UsageQuery, options?: CallOptions): Promise<Usage>;
  usage(query: UsageQuery = {}, options: CallOptions = {}): Promise<Usage> {
    return this.#call({ operation: 'memory_usage', query, signal: options.signal });
  }

  /** One call: attempts until an answer that is not retryable, at most 1 + maxRetries of them. */
  async #call<T>(call: Call): Promise<T> {
    const request = toRequest(call);
    // Whether an earlier attempt may have been carried out though its answer was lost.
    let lost = false;
    for (let attempt = 0; ; attempt++) {
      try {
        return (await this.#attempt(request)) as T;
      } catch (error) {
        if (lost && error instanceof MemoryVersionConflictError && request.appliedBefore) {
          const earlier = await request.appliedBefore();
          if (earlier !== undefined) return earlier as T;
        }
        const wait = this.#retryDelay(error, attempt, request.repeatable ?? true);
        if (wait === null) throw error;
        lost ||= error instanceof MemoryConnectionError && !notSent(error);
        await sleep(wait, request.signal);
      }
    }
  }

  /** How long to wait before retrying after `error`, or null when it is not retried. */
  #retryDelay(error: unknown, attempt: number, repeatable: boolean): number | null {
    if (attempt >= this.#maxRetries) return null;
    if (error instanceof MemoryApiError && RETRIED_CODES.has(error.code)) {
      const wait = (error.retryAfter ?? 1) * 1000;
      return wait <= this.#maxRetryDelayMs ? wait : null;
    }
    // A failed connection may have lost the answer of a request that was carried out: safe to repeat because
    // writes carry an idempotency key and reads change nothing. A delete or a forget is repeated only when
    // the request was never sent: a second delete would answer not_found for a record the first deleted,
    // and a second forget would take records written in between.
    if (error instanceof MemoryConnectionError && (repeatable || notSent(error))) return Math.min(100 * 2 ** attempt, 2_000);
    return null;
  }

  async #attempt({ method, path, body, headers, signal, repeatable = true }: Request): Promise<unknown> {
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    let response: Awaited<ReturnType<Fetch>>;
    let text: string;
    for (let resent = false; ; resent = true) {
      let answered = false;
      try {
        response = await this.#fetch(`${this.#baseUrl}${path}`, {
          method,
          headers: {
            Authorization: `Bearer ${this.#apiKey}`,
            Accept: 'application/json',
            ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
            ...headers,
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
        answered = true;
        text = await response.text();
        break;
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (timeout.aborted) throw new MemoryTimeoutError(`${method} ${path}: no answer within ${this.#timeoutMs} ms`);
        // A kept-alive connection that the service closed just as this request went out (its idle timeout,
        // say) fails before any answer. A repeatable call then goes out once more on a new connection, within
        // the same deadline; this is not one of the retries, since the service never answered.
        if (repeatable && !answered && !resent && closedWhileIdle(error)) continue;
        throw new MemoryConnectionError(`${method} ${path}: ${describeFailure(error)}`, { cause: error });
      }
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw apiError(response.status, 'invalid_response', `${method} ${path} answered ${response.status} with a body that is not JSON`);
    }
    if (response.ok) return json;
    if (!isErrorBody(json)) {
      throw apiError(response.status, 'invalid_response', `${method} ${path} answered ${response.status} without an error code`);
    }
    const retryAfter = json.retry_after ?? (Number(response.headers.get('Retry-After')) || undefined);
    throw apiError(response.status, json.error, json.message, retryAfter, json.request_id);
  }
}

/** Whether a record holds every field a patch sets (metadata compared as JSON, whatever the order of its keys). */
function holdsPatch(record: MemoryRecord, patch: RecordPatch): boolean {
  return Object.entries(patch).every(([field, value]) => value === undefined || sameJson(record[field as keyof MemoryRecord], value));
}

/** Deep equality of two JSON values; objects are equal when they have the same keys with equal values. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  const aKeys = Object.keys(a);
  const bValues = b as { [key: string]: unknown };
  return aKeys.length === Object.keys(b).length && aKeys.every((key) => Object.hasOwn(b, key) && sameJson((a as { [key: string]: unknown })[key], bValues[key]));
}

/** The HTTP request of a call: its operation's method, and its path with the parameters and query string filled in. */
function toRequest({ operation, params = {}, query = {}, ...rest }: Call): Request {
  const { method, path } = OPERATIONS[operation];
  const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
  return { method, path: `${filled}${queryString(query)}`, ...rest };
}

/** The query string of a search or a listing: its set parameters, or nothing. */
function queryString(query: object): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== null) params.set(name, String(value));
  return params.size > 0 ? `?${params}` : '';
}

/** A record id for its path segment. An empty id would name the listing instead, so it is refused here. */
function recordId(id: string): string {
  if (id === '') throw new TypeError('MemoryClient: a record id must not be empty');
  return id;
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
