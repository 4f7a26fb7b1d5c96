import { z } from 'zod';
import type { ErrorCode } from '../domain/errors.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../domain/idempotency.js';
import { RANKING } from '../domain/rank.js';
import { LIMITS } from '../domain/record.js';
import {
  classifyInputSchema,
  deletedRecordSchema,
  forgetAcceptedSchema,
  forgetInputSchema,
  forgetJobSchema,
  forgetResultSchema,
  listQuerySchema,
  recallQuerySchema,
  recordInputSchema,
  recordPageSchema,
  recordPatchSchema,
  recordReceiptSchema,
  recordSchema,
  searchResultsSchema,
  suggestionSchema,
  usageQuerySchema,
  usageSchema,
} from '../domain/schemas.js';
import type { Scope } from '../domain/tenant.js';
import { EVERY_OPERATION, JSON_BODY } from './error-responses.js';
import { headerRef, valueSchema, type JsonObject } from './json-schema.js';

/**
 * The operations registry: every operation of the API, declared once. The local gateway's routes, API
 * Gateway's routes and integrations, the scope each route needs, the OpenAPI paths with their error
 * responses, and the clients' paths (generated into the SDK and the Python package) are all read from this
 * list. An operation's code lives in the handler of its Lambda function (`functions/<fn>/handler.ts`),
 * which apiFunction (shared/http/api-route.ts) holds to implement exactly the operations listed here for it.
 */

/** The Lambda functions that answer operations: each has only the permissions its operations need. */
export type ApiFunction = 'record' | 'read' | 'forget' | 'query' | 'usage' | 'classify';

/** The methods operations are declared with; every GET also answers HEAD (answeredMethods). */
export type OperationMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** A successful answer of an operation, as the OpenAPI document describes it. */
export interface SuccessResponse {
  description: string;
  /** Its headers, as OpenAPI header objects (mostly references to `components.headers`). */
  headers: Record<string, JsonObject>;
  schema: z.ZodType;
}

/** One operation: where it answers, who may call it, what it takes and answers, and which function runs it. */
export interface OperationSpec {
  operationId: string;
  method: OperationMethod;
  /** The path as API Gateway names the resource, with `{name}` for a path parameter. */
  path: string;
  /** The key scope it needs (decisions.md, "Keys with scopes"). */
  scope: Scope;
  fn: ApiFunction;
  summary: string;
  description: string;
  /** The description of each path parameter, in the path's order. */
  pathParameters?: Readonly<Record<string, string>>;
  /** The typed query string, and the defaults the service applies to what the caller leaves out. */
  query?: { schema: z.ZodObject; defaults: Readonly<Record<string, unknown>> };
  /** Header parameters, as OpenAPI parameter objects. */
  headers?: readonly JsonObject[];
  /** The JSON body it requires; the function's handler receives it parsed (readJsonBody). */
  body?: z.ZodType;
  responses: Readonly<Record<number, SuccessResponse>>;
  /** Every error code it can answer with. */
  errors: readonly ErrorCode[];
}

const requestId = () => ({ 'X-Request-Id': headerRef('X-Request-Id') });

/** The optional `Idempotency-Key` header of a write, with the rule readIdempotencyKey applies. */
const idempotencyKeyHeader = (): JsonObject => ({
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes the write safe to retry: within 24 hours, the same key from the same tenant with the same body answers ' +
    'the first 201 again (with `Idempotent-Replayed: true`), storing and counting nothing new; with a different body ' +
    'it answers 422 `idempotency_key_reused`. A malformed key is 400 `invalid_field`.',
  schema: valueSchema(z.string().min(1).max(LIMITS.idempotencyKeyChars).regex(IDEMPOTENCY_KEY_PATTERN)),
});

/** The optional `If-Match` header of an update, with the rule ifMatchVersions applies. */
const ifMatchHeader = (): JsonObject => ({
  name: 'If-Match',
  in: 'header',
  required: false,
  description:
    'Makes the update conditional: `"<version>"`, the record\'s `ETag` as `GET` sent it (or a comma-separated list of them). ' +
    'When the record has another version, the answer is 412 `version_conflict` and nothing changes; `*` or no header updates whatever the version.',
  schema: { type: 'string' },
});

/** `POST /v1/classify`, and its alias under /api/v1, which needs an operationId of its own. */
function classifyOperation(operationId: string, path: string, note: string) {
  return {
    operationId,
    method: 'POST',
    path,
    scope: 'read',
    fn: 'classify',
    summary: 'Suggest a type for a record before writing it',
    description:
      'Classifies a title and a body into one of the six types, with a calibrated confidence and a score per type. ' +
      `It needs a valid key and is rate-limited; it counts against neither quota. ${note}`,
    body: classifyInputSchema,
    responses: { 200: { description: 'The suggestion.', headers: requestId(), schema: suggestionSchema } },
    errors: [...EVERY_OPERATION, ...JSON_BODY, 'missing_field', 'invalid_field', 'body_too_large'],
  } as const;
}

/** Every operation, in the order of the OpenAPI document's paths. */
export const OPERATIONS = [
  {
    operationId: 'memory_remember',
    method: 'POST',
    path: '/api/v1/record',
    scope: 'write',
    fn: 'record',
    summary: 'Store a record',
    description:
      'Stores a record and answers at once with its id. The 201 means the record, its place in the search index and ' +
      'its classification job are durable; it counts once against the monthly record quota. Any field not in the ' +
      'schema is refused, so a misspelt field is never dropped. With `supersedes`, the records it names get `superseded_by` ' +
      'in the same atomic step; one the caller could not `GET` is 404 `not_found`, naming its id, and nothing is stored.',
    headers: [idempotencyKeyHeader()],
    body: recordInputSchema,
    responses: {
      201: {
        description: 'Stored; or, with `Idempotent-Replayed: true`, the first answer to the same request again.',
        headers: { Location: headerRef('Location'), 'Idempotent-Replayed': headerRef('Idempotent-Replayed'), ...requestId() },
        schema: recordReceiptSchema,
      },
    },
    errors: [...EVERY_OPERATION, ...JSON_BODY, 'missing_field', 'invalid_field', 'invalid_type', 'body_too_large', 'not_found', 'idempotency_key_reused', 'record_quota_exceeded'],
  },
  {
    operationId: 'memory_list',
    method: 'GET',
    path: '/api/v1/record',
    scope: 'read',
    fn: 'read',
    summary: 'List records, a page at a time',
    description:
      "Lists the tenant's records that pass the filters, newest first (`order=asc`: oldest first), by `created_at` and then `id`. " +
      'Pass `next_cursor` as `cursor` for the next page; paging from the first page to the last returns every matching record ' +
      'exactly once, even while records are written. Counts against neither quota.',
    query: { schema: listQuerySchema, defaults: { limit: LIMITS.searchLimitDefault, order: 'desc' } },
    responses: { 200: { description: 'One page.', headers: requestId(), schema: recordPageSchema } },
    errors: [...EVERY_OPERATION, 'invalid_field', 'invalid_type', 'invalid_limit', 'invalid_since', 'invalid_until', 'invalid_cursor'],
  },
  {
    operationId: 'memory_get',
    method: 'GET',
    path: '/api/v1/record/{id}',
    scope: 'read',
    fn: 'read',
    summary: 'Read a record by id',
    description: "The record, as stored. An id that is unknown, malformed, deleted or another tenant's is 404 alike. Counts against neither quota.",
    pathParameters: { id: 'The record id, as the 201 of the write gave it.' },
    responses: { 200: { description: 'The record.', headers: { ETag: headerRef('ETag'), ...requestId() }, schema: recordSchema } },
    errors: [...EVERY_OPERATION, 'not_found'],
  },
  {
    operationId: 'memory_update',
    method: 'PATCH',
    path: '/api/v1/record/{id}',
    scope: 'write',
    fn: 'record',
    summary: 'Update a record',
    description:
      'Changes the fields the body names (at least one of `title`, `body`, `type`, `client`, `metadata`; `client: null` and ' +
      '`metadata: null` remove the field) and answers the whole record as `GET` does, one version more, with `updated_at` set. ' +
      'From this answer on every read returns the new fields: search finds the new words and no longer the old ones. ' +
      'When `title` or `body` changed, the classifier suggests a type again; the record\'s `type` stays the caller\'s. ' +
      "A key bound to an agent may update only that agent's records (another's is 404). Counts against the rate limit, not the record quota.",
    pathParameters: { id: 'The record id.' },
    headers: [ifMatchHeader()],
    body: recordPatchSchema,
    responses: { 200: { description: 'The record as updated.', headers: { ETag: headerRef('ETag'), ...requestId() }, schema: recordSchema } },
    errors: [...EVERY_OPERATION, ...JSON_BODY, 'missing_field', 'invalid_field', 'invalid_type', 'body_too_large', 'not_found', 'version_conflict'],
  },
  {
    operationId: 'memory_delete',
    method: 'DELETE',
    path: '/api/v1/record/{id}',
    scope: 'delete',
    fn: 'forget',
    summary: 'Delete a record',
    description:
      'Deletes the record: from this answer on, no read returns it (get, search, list, export), on every backend. ' +
      'Deleting it again is 404. A delete gives no quota back.',
    pathParameters: { id: 'The record id.' },
    responses: { 200: { description: 'Deleted.', headers: requestId(), schema: deletedRecordSchema } },
    errors: [...EVERY_OPERATION, 'not_found'],
  },
  {
    operationId: 'memory_forget',
    method: 'POST',
    path: '/api/v1/forget',
    scope: 'delete',
    fn: 'forget',
    summary: 'Delete every record that matches the selectors',
    description:
      'Deletes the records of the tenant that match every selector given and, unless `ids` names them, were created before the request; with ' +
      '`dry_run`, only counts them. Where the backend cannot finish within the request (a large forget on AWS), it answers ' +
      '202 with a job, and the records it matched are hidden from every read from that answer on.',
    body: forgetInputSchema,
    responses: {
      200: { description: 'Done (or counted, on a dry run).', headers: requestId(), schema: forgetResultSchema },
      202: {
        description: 'Running as a job; follow it at `GET /api/v1/forget/{job_id}` (also in `Location`).',
        headers: { ...requestId(), Location: { description: 'The path of the job.', schema: { type: 'string' } } },
        schema: forgetAcceptedSchema,
      },
    },
    errors: [...EVERY_OPERATION, ...JSON_BODY, 'missing_field', 'invalid_field', 'invalid_type'],
  },
  {
    operationId: 'memory_forget_status',
    method: 'GET',
    path: '/api/v1/forget/{job_id}',
    scope: 'delete',
    fn: 'forget',
    summary: 'The state of a forget job',
    description: "How far a forget that answered 202 has got. A job id that is unknown or another tenant's is 404.",
    pathParameters: { job_id: 'The job_id of the 202.' },
    responses: { 200: { description: 'The job.', headers: requestId(), schema: forgetJobSchema } },
    errors: [...EVERY_OPERATION, 'not_found'],
  },
  {
    operationId: 'memory_recall',
    method: 'GET',
    path: '/api/v1/query',
    scope: 'read',
    fn: 'query',
    summary: 'Search records',
    description:
      `Searches the tenant's records: English full-text search over title and body (BM25, the title weighing ${RANKING.titleWeight} times ` +
      'the body), best first; without `q`, the newest first. Parameters not listed are ignored; a repeated parameter ' +
      'takes its last value. Only a 200 counts against the monthly query quota.',
    query: { schema: recallQuerySchema, defaults: { limit: LIMITS.searchLimitDefault } },
    responses: { 200: { description: 'The matching records, best first.', headers: requestId(), schema: searchResultsSchema } },
    errors: [...EVERY_OPERATION, 'invalid_field', 'invalid_type', 'invalid_limit', 'invalid_since', 'invalid_until', 'invalid_min_rank', 'query_quota_exceeded', 'overloaded', 'search_timeout'],
  },
  {
    operationId: 'memory_usage',
    method: 'GET',
    path: '/api/v1/usage',
    scope: 'read',
    fn: 'usage',
    summary: "The tenant's usage this month",
    description:
      'Records and searches used this month (UTC), the quotas and what remains, from the same counters that enforce the quotas, ' +
      "and the calling key's rate limit; with `include=key`, also what the calling key may do. Counts against neither quota.",
    query: { schema: usageQuerySchema, defaults: {} },
    responses: { 200: { description: 'The usage.', headers: requestId(), schema: usageSchema } },
    errors: [...EVERY_OPERATION, 'invalid_field'],
  },
  classifyOperation('memory_classify', '/v1/classify', 'The same operation answers at `POST /api/v1/classify`.'),
  classifyOperation('memory_classify_alias', '/api/v1/classify', 'The same operation as `POST /v1/classify` (`memory_classify`), under the `/api/v1` prefix.'),
] as const satisfies readonly OperationSpec[];

/** The registry's operations, each as its spec: for what reads a field only some declare (a body, headers). */
export const OPERATION_SPECS: readonly OperationSpec[] = OPERATIONS;

/** One operation of the registry, with its literal id, method, path and function. */
export type Operation = (typeof OPERATIONS)[number];

/** The operationId of an operation of the registry. */
export type OperationId = Operation['operationId'];

/** The operations one Lambda function answers. */
export type OperationOf<F extends ApiFunction> = Extract<Operation, { fn: F }>;

const BY_ROUTE: ReadonlyMap<string, Operation> = new Map(OPERATIONS.map((operation) => [`${operation.method} ${operation.path}`, operation]));

/**
 * The operation a request reaches, by its method and resource (`/api/v1/record/{id}`, as API Gateway and the
 * local gateway name it); HEAD is GET without the body. Undefined when none is declared there.
 */
export function operationAt(method: string, resource: string): Operation | undefined {
  return BY_ROUTE.get(`${method === 'HEAD' ? 'GET' : method} ${resource}`);
}
