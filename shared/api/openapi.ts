import type { z } from 'zod';
import { errorBodySchema } from '../domain/schemas.js';
import { errorResponses, routingResponses } from './error-responses.js';
import { componentSchemas, schemaRef, valueSchema, type JsonObject } from './json-schema.js';
import { OPERATION_SPECS, type OperationSpec } from './operations.js';

/**
 * The OpenAPI 3.1 document of the API (docs/openapi.json), built from the zod schemas of
 * shared/domain/schemas.ts through zod's JSON Schema output, never written by hand. The paths are the
 * operations of the registry (operations.ts); schemas go to `components.schemas` under their `meta({ id })`;
 * the error codes each response can carry come from ERROR_STATUS and each operation's `errors`. `npm run generate` writes the file, a test
 * fails when the committed file differs from this, and the local server serves the same text at
 * `GET /openapi.json`.
 */

/** The interface version label of the design documents: the document's `info.version`. */
export const INTERFACE_VERSION = '2026-05-20';

/** The query parameters of a GET, one per field of its typed query (search's or a listing's), in its order. */
function queryParameters(shape: Record<string, z.ZodType>, defaults: Readonly<Record<string, unknown>>): JsonObject[] {
  return Object.entries(shape).map(([name, field]) => {
    const schema = valueSchema(field);
    const fallback = defaults[name];
    if (fallback !== undefined) schema.default = fallback;
    return { name, in: 'query', required: false, description: field.description, schema };
  });
}

const jsonContent = (schema: z.ZodType) => ({ 'application/json': { schema: schemaRef(schema) } });

/** One operation as an OpenAPI operation object: its path, query and header parameters, its body and its answers. */
function operationObject(operation: OperationSpec): JsonObject {
  const parameters = [
    ...Object.entries(operation.pathParameters ?? {}).map(([name, description]) => ({ name, in: 'path', required: true, description, schema: { type: 'string' } })),
    ...(operation.query === undefined ? [] : queryParameters(operation.query.schema.shape, operation.query.defaults)),
    ...(operation.headers ?? []),
  ];
  const responses = Object.entries(operation.responses).map(([status, { description, headers, schema }]) => [status, { description, headers, content: jsonContent(schema) }]);
  return {
    operationId: operation.operationId,
    summary: operation.summary,
    description: operation.description,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(operation.body === undefined ? {} : { requestBody: { required: true, content: jsonContent(operation.body) } }),
    responses: { ...Object.fromEntries(responses), ...errorResponses(operation.errors) },
  };
}

/** The `paths` of the document: each operation under its path and method, in the registry's order, then the health check. */
function paths(): JsonObject {
  const byPath: Record<string, JsonObject> = {};
  for (const operation of OPERATION_SPECS) (byPath[operation.path] ??= {})[operation.method.toLowerCase()] = operationObject(operation);
  byPath['/healthz'] = { get: HEALTH_CHECK };
  return byPath;
}

/** `GET /healthz`: outside the registry, since it has no key, no scope and no tenant (docs/api.md, "Health"). */
const HEALTH_CHECK: JsonObject = {
  operationId: 'health_check',
  summary: 'Whether the service and its database answer',
  description: 'Needs no key and reads no tenant data, for load balancers and monitors. Never cached. On AWS it has a throttle of its own (10 requests a second, bursts of 20).',
  security: [],
  responses: {
    '200': { description: 'The database answers.', content: { 'application/json': { schema: { type: 'object', properties: { status: { const: 'ok' } }, required: ['status'] } } } },
    '503': { description: 'The database does not answer, or not within 2 seconds.', content: { 'application/json': { schema: { type: 'object', properties: { status: { const: 'unavailable' } }, required: ['status'] } } } },
  },
};

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
    paths: paths(),
    components: {
      schemas: {
        // Every operation's body and answers, and what they reach: a new operation's schemas need no list.
        ...componentSchemas(OPERATION_SPECS.flatMap(({ body }) => (body ? [body] : [])), 'input'),
        ...componentSchemas([...OPERATION_SPECS.flatMap(({ responses }) => Object.values(responses).map(({ schema }) => schema)), errorBodySchema], 'output'),
      },
      responses: routing,
      headers: {
        'X-Request-Id': {
          description: "The request's id, locally (API Gateway sends `x-amzn-RequestId` instead). A 500 body carries it as `request_id`.",
          schema: { type: 'string' },
        },
        Location: { description: 'The path of the new record: `/api/v1/record/<id>`.', required: true, schema: { type: 'string' } },
        ETag: { description: "The record's version as an entity tag, `\"<version>\"`: send it as `If-Match` to update only that version.", required: true, schema: { type: 'string' } },
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
