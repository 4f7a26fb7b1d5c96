import { z } from 'zod';
import { IDEMPOTENCY_KEY_PATTERN } from '../domain/idempotency.js';
import { RANKING } from '../domain/rank.js';
import { LIMITS } from '../domain/record.js';
import {
  classificationSchema,
  classifyInputSchema,
  deletedRecordSchema,
  errorBodySchema,
  forgetAcceptedSchema,
  forgetInputSchema,
  forgetJobSchema,
  forgetResultSchema,
  listQuerySchema,
  recallQuerySchema,
  recordPageSchema,
  recordSchema,
  usageSchema,
  recordInputSchema,
  recordReceiptSchema,
  searchHitSchema,
  searchResultsSchema,
  suggestionSchema,
} from '../domain/schemas.js';
import { errorResponses, OPERATION_ERRORS, routingResponses } from './error-responses.js';
import { componentSchemas, headerRef, schemaRef, valueSchema, type JsonObject } from './json-schema.js';

/**
 * The OpenAPI 3.1 document of the API (docs/openapi.json), built from the zod schemas of
 * shared/domain/schemas.ts through zod's JSON Schema output, never written by hand. Schemas go to
 * `components.schemas` under their `meta({ id })`; the error codes each response can carry come from
 * ERROR_STATUS and the per-operation lists of error-responses.ts. `npm run generate` writes the file, a test
 * fails when the committed file differs from this, and the local server serves the same text at
 * `GET /openapi.json`.
 */

/** The interface version label of the design documents: the document's `info.version`. */
export const INTERFACE_VERSION = '2026-05-20';

/** Defaults the typed search query and listing leave to the service. */
const QUERY_DEFAULTS: { [K in keyof typeof recallQuerySchema.shape]?: unknown } = { limit: LIMITS.searchLimitDefault };
const LIST_DEFAULTS: { [K in keyof typeof listQuerySchema.shape]?: unknown } = { limit: LIMITS.searchLimitDefault, order: 'desc' };

/** The query parameters of a GET, one per field of its typed query (search's or a listing's), in its order. */
function queryParameters(shape: Record<string, z.ZodType>, defaults: Record<string, unknown>): JsonObject[] {
  return Object.entries(shape).map(([name, field]) => {
    const schema = valueSchema(field);
    const fallback = defaults[name];
    if (fallback !== undefined) schema.default = fallback;
    return { name, in: 'query', required: false, description: field.description, schema };
  });
}

/** A path parameter that names a record or a job. */
const idParameter = (name: string, description: string) => ({ name, in: 'path', required: true, description, schema: { type: 'string' } });

const requestId = () => ({ 'X-Request-Id': headerRef('X-Request-Id') });

/** The optional `Idempotency-Key` header of a write, with the rule readIdempotencyKey applies. */
const idempotencyKeyParameter = () => ({
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes the write safe to retry: within 24 hours, the same key from the same tenant with the same body answers ' +
    'the first 201 again (with `Idempotent-Replayed: true`), storing and counting nothing new; with a different body ' +
    'it answers 422 `idempotency_key_reused`. A malformed key is 400 `invalid_field`.',
  schema: valueSchema(z.string().min(1).max(LIMITS.idempotencyKeyChars).regex(IDEMPOTENCY_KEY_PATTERN)),
});

const jsonContent = (schema: z.ZodType) => ({ 'application/json': { schema: schemaRef(schema) } });

/** `POST /v1/classify`, and its alias under /api/v1, which needs an operationId of its own. */
function classifyOperation(operationId: string, note: string): JsonObject {
  return {
    operationId,
    summary: 'Suggest a type for a record before writing it',
    description:
      'Classifies a title and a body into one of the six types, with a calibrated confidence and a score per type. ' +
      `It needs a valid key and is rate-limited; it counts against neither quota. ${note}`,
    requestBody: { required: true, content: jsonContent(classifyInputSchema) },
    responses: {
      '200': { description: 'The suggestion.', headers: { 'X-Request-Id': headerRef('X-Request-Id') }, content: jsonContent(suggestionSchema) },
      ...errorResponses(OPERATION_ERRORS.classify),
    },
  };
}

/** The OpenAPI 3.1 document of the API. */
export function openApiDocument(): JsonObject {
  const routing = routingResponses();
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent memory service',
      version: INTERFACE_VERSION,
      description: [
        `A memory store for AI agents: store records, find them again with English full-text search. \`info.version\` is the interface version label, ${INTERFACE_VERSION}; the path prefix \`/api/v1\` carries the major version.`,
        'docs/api.md is the full contract: the order of checks, how `q` is read, rank, quotas, idempotency and every choice the design documents left open.',
        `Routing comes before authentication: an unknown path answers 404 \`not_found\` and a known path with another method 405 \`method_not_allowed\` with an \`Allow\` header (\`components.responses\`: ${Object.keys(routing).join(', ')}).`,
        'This document is generated from the zod schemas (shared/domain/schemas.ts) by `npm run generate`; do not edit it. The local server serves it at `GET /openapi.json`, without authentication.',
      ].join('\n\n'),
    },
    servers: [
      { url: 'http://127.0.0.1:8787', description: 'The local server (`npm start`), on its default host and port.' },
      {
        url: 'https://{apiId}.execute-api.{region}.amazonaws.com/{stage}',
        description: "An AWS deployment: the stack's `ApiUrl` output (docs/deploy.md).",
        variables: {
          apiId: { default: 'api-id', description: 'The id of the REST API.' },
          region: { default: 'us-east-1', description: 'The AWS region of the stack.' },
          stage: { default: 'prod', description: 'The stage, as given by `-c stage=…` on deploy.' },
        },
      },
    ],
    security: [{ bearer: [] }],
    paths: {
      '/api/v1/record': {
        post: {
          operationId: 'memory_remember',
          summary: 'Store a record',
          description:
            'Stores a record and answers at once with its id. The 201 means the record, its place in the search index and ' +
            'its classification job are durable; it counts once against the monthly record quota. Any field not in the ' +
            'schema is refused, so a misspelt field is never dropped.',
          parameters: [idempotencyKeyParameter()],
          requestBody: { required: true, content: jsonContent(recordInputSchema) },
          responses: {
            '201': {
              description: 'Stored; or, with `Idempotent-Replayed: true`, the first answer to the same request again.',
              headers: { Location: headerRef('Location'), 'Idempotent-Replayed': headerRef('Idempotent-Replayed'), 'X-Request-Id': headerRef('X-Request-Id') },
              content: jsonContent(recordReceiptSchema),
            },
            ...errorResponses(OPERATION_ERRORS.remember),
          },
        },
        get: {
          operationId: 'memory_list',
          summary: 'List records, a page at a time',
          description:
            "Lists the tenant's records that pass the filters, newest first (`order=asc`: oldest first), by `created_at` and then `id`. " +
            'Pass `next_cursor` as `cursor` for the next page; paging from the first page to the last returns every matching record ' +
            'exactly once, even while records are written. Counts against neither quota.',
          parameters: queryParameters(listQuerySchema.shape, LIST_DEFAULTS),
          responses: {
            '200': { description: 'One page.', headers: requestId(), content: jsonContent(recordPageSchema) },
            ...errorResponses(OPERATION_ERRORS.list),
          },
        },
      },
      '/api/v1/record/{id}': {
        get: {
          operationId: 'memory_get',
          summary: 'Read a record by id',
          description: 'The record, as stored. An id that is unknown, malformed, deleted or another tenant\'s is 404 alike. Counts against neither quota.',
          parameters: [idParameter('id', 'The record id, as the 201 of the write gave it.')],
          responses: {
            '200': { description: 'The record.', headers: requestId(), content: jsonContent(recordSchema) },
            ...errorResponses(OPERATION_ERRORS.get),
          },
        },
        delete: {
          operationId: 'memory_delete',
          summary: 'Delete a record',
          description:
            'Deletes the record: from this answer on, no read returns it (get, search, list, export), on every backend. ' +
            'Deleting it again is 404. A delete gives no quota back.',
          parameters: [idParameter('id', 'The record id.')],
          responses: {
            '200': { description: 'Deleted.', headers: requestId(), content: jsonContent(deletedRecordSchema) },
            ...errorResponses(OPERATION_ERRORS.delete),
          },
        },
      },
      '/api/v1/forget': {
        post: {
          operationId: 'memory_forget',
          summary: 'Delete every record that matches the selectors',
          description:
            'Deletes the records of the tenant that match every selector given and, unless `ids` names them, were created before the request; with ' +
            '`dry_run`, only counts them. Where the backend cannot finish within the request (a large forget on AWS), it answers ' +
            '202 with a job, and the records it matched are hidden from every read from that answer on.',
          requestBody: { required: true, content: jsonContent(forgetInputSchema) },
          responses: {
            '200': { description: 'Done (or counted, on a dry run).', headers: requestId(), content: jsonContent(forgetResultSchema) },
            '202': {
              description: 'Running as a job; follow it at `GET /api/v1/forget/{job_id}` (also in `Location`).',
              headers: { ...requestId(), Location: { description: 'The path of the job.', schema: { type: 'string' } } },
              content: jsonContent(forgetAcceptedSchema),
            },
            ...errorResponses(OPERATION_ERRORS.forget),
          },
        },
      },
      '/api/v1/forget/{job_id}': {
        get: {
          operationId: 'memory_forget_status',
          summary: 'The state of a forget job',
          description: 'How far a forget that answered 202 has got. A job id that is unknown or another tenant\'s is 404.',
          parameters: [idParameter('job_id', 'The job_id of the 202.')],
          responses: {
            '200': { description: 'The job.', headers: requestId(), content: jsonContent(forgetJobSchema) },
            ...errorResponses(OPERATION_ERRORS.forgetStatus),
          },
        },
      },
      '/api/v1/query': {
        get: {
          operationId: 'memory_recall',
          summary: 'Search records',
          description:
            `Searches the tenant's records: English full-text search over title and body (BM25, the title weighing ${RANKING.titleWeight} times ` +
            'the body), best first; without `q`, the newest first. Parameters not listed are ignored; a repeated parameter ' +
            'takes its last value. Only a 200 counts against the monthly query quota.',
          parameters: queryParameters(recallQuerySchema.shape, QUERY_DEFAULTS),
          responses: {
            '200': { description: 'The matching records, best first.', headers: { 'X-Request-Id': headerRef('X-Request-Id') }, content: jsonContent(searchResultsSchema) },
            ...errorResponses(OPERATION_ERRORS.recall),
          },
        },
      },
      '/api/v1/usage': {
        get: {
          operationId: 'memory_usage',
          summary: "The tenant's usage this month",
          description:
            "Records and searches used this month (UTC), the quotas and what remains, from the same counters that enforce the quotas, " +
            "and the calling key's rate limit. Counts against neither quota.",
          responses: {
            '200': { description: 'The usage.', headers: requestId(), content: jsonContent(usageSchema) },
            ...errorResponses(OPERATION_ERRORS.usage),
          },
        },
      },
      '/v1/classify': { post: classifyOperation('memory_classify', 'The same operation answers at `POST /api/v1/classify`.') },
      '/api/v1/classify': { post: classifyOperation('memory_classify_alias', 'The same operation as `POST /v1/classify` (`memory_classify`), under the `/api/v1` prefix.') },
    },
    components: {
      schemas: {
        ...componentSchemas([recordInputSchema, classifyInputSchema, forgetInputSchema], 'input'),
        ...componentSchemas(
          [
            recordReceiptSchema,
            searchResultsSchema,
            searchHitSchema,
            recordSchema,
            recordPageSchema,
            deletedRecordSchema,
            forgetResultSchema,
            forgetAcceptedSchema,
            forgetJobSchema,
            usageSchema,
            classificationSchema,
            suggestionSchema,
            errorBodySchema,
          ],
          'output',
        ),
      },
      responses: routing,
      headers: {
        'X-Request-Id': {
          description: "The request's id, locally (API Gateway sends `x-amzn-RequestId` instead). A 500 body carries it as `request_id`.",
          schema: { type: 'string' },
        },
        Location: { description: 'The path of the new record: `/api/v1/record/<id>`.', required: true, schema: { type: 'string' } },
        'Idempotent-Replayed': {
          description: 'Present, as `true`, only when the answer replays an earlier request with the same `Idempotency-Key`.',
          schema: { type: 'string', const: 'true' },
        },
        'Retry-After': { description: 'Seconds to wait before retrying: the same number as `retry_after` in the body.', required: true, schema: valueSchema(errorBodySchema.shape.retry_after) },
        Allow: { description: 'The methods the path answers, e.g. `POST`.', required: true, schema: { type: 'string' } },
      },
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API key, as `Authorization: Bearer <API_KEY>` (the scheme word in any case). The key decides the tenant; ' +
            'every read and write is scoped to it. `npm run admin -- key create` issues one and shows it once.',
        },
      },
    },
  };
}

/** The document as docs/openapi.json holds it and the local server sends it: 2-space JSON and a final newline. */
export function openApiJson(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}
