import { z } from 'zod';
import { ERROR_STATUS } from '../../shared/domain/errors.js';
import { pathParameters } from '../../local/gateway.js';
import {
  deletedRecordSchema,
  errorBodySchema,
  forgetAcceptedSchema,
  forgetJobSchema,
  forgetResultSchema,
  recordPageSchema,
  recordReceiptSchema,
  recordSchema,
  searchResultsSchema,
  suggestionSchema,
  usageSchema,
} from '../../shared/domain/schemas.js';

/**
 * The documented answer of each route that succeeds: its status and body schema (the schemas that
 * docs/openapi.json is generated from). `GET /openapi.json` answers the document itself.
 */
const SUCCESS: Record<string, [status: number, schema: z.ZodType][]> = {
  'POST /api/v1/record': [[201, recordReceiptSchema]],
  'GET /api/v1/record': [[200, recordPageSchema]],
  'GET /api/v1/record/{id}': [[200, recordSchema]],
  'PATCH /api/v1/record/{id}': [[200, recordSchema]],
  'DELETE /api/v1/record/{id}': [[200, deletedRecordSchema]],
  'POST /api/v1/forget': [
    [200, forgetResultSchema],
    [202, forgetAcceptedSchema],
  ],
  'GET /api/v1/forget/{job_id}': [[200, forgetJobSchema]],
  'GET /api/v1/query': [[200, searchResultsSchema]],
  'GET /api/v1/usage': [[200, usageSchema]],
  'POST /v1/classify': [[200, suggestionSchema]],
  'POST /api/v1/classify': [[200, suggestionSchema]],
  'GET /openapi.json': [[200, z.looseObject({ openapi: z.literal('3.1.0') })]],
};

/** The documented successes of a method on a path, found by its route's template. */
function successesOf(method: string, path: string): [number, z.ZodType][] | undefined {
  const key = Object.keys(SUCCESS).find((k) => {
    const [m, template] = k.split(' ') as [string, string];
    return m === method && pathParameters(template, path) !== null;
  });
  return key === undefined ? undefined : SUCCESS[key];
}

function parseOrThrow<S extends z.ZodType>(schema: S, body: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    throw new Error(`${what} does not fit its schema:\n${z.prettifyError(parsed.error)}\nbody: ${JSON.stringify(body)?.slice(0, 500)}`);
  }
  return parsed.data;
}

/**
 * Checks a real answer against the documented response schemas, strictly (an extra field fails too): a
 * success must be the route's documented status and body; an error body must fit the Error schema, with a
 * code whose status is the answer's, `retry_after` and a matching `Retry-After` on 429 and 503, a
 * `request_id` on 500. Every answer is JSON. A record (the 200 of a get or an update) carries its version as
 * its `ETag`. The answer to a HEAD is the GET's status and headers with no body. Throws an Error that names
 * the route when the answer does not fit.
 */
export function checkAnswer(method: string, url: string, status: number, headers: Headers, body: unknown): void {
  const path = new URL(url, 'http://localhost').pathname;
  const what = `${method} ${path} → ${status}`;
  const contentType = headers.get('content-type') ?? '';
  if (!/^application\/json(;|$)/.test(contentType)) throw new Error(`${what} has Content-Type ${JSON.stringify(contentType)}, not JSON`);

  if (method === 'HEAD') {
    if (body !== undefined) throw new Error(`${what} has a body`);
    const documented = successesOf('GET', path);
    if (status < 400 && !documented?.some(([s]) => s === status)) throw new Error(`${what}: GET ${path} does not answer ${status}`);
    return;
  }

  if (status >= 400) {
    const error = parseOrThrow(errorBodySchema, body, `the error body of ${what}`);
    if (ERROR_STATUS[error.error] !== status) throw new Error(`${what} carries ${error.error}, which ERROR_STATUS maps to ${ERROR_STATUS[error.error]}`);
    if ((status === 429 || status === 503) && (error.retry_after === undefined || headers.get('retry-after') !== String(error.retry_after))) {
      throw new Error(`${what} needs retry_after and the same Retry-After header (got ${error.retry_after} and ${headers.get('retry-after')})`);
    }
    if (status === 500 && error.request_id === undefined) throw new Error(`${what} has no request_id`);
    return;
  }

  const documented = successesOf(method, path);
  if (documented === undefined) throw new Error(`${what}: no success answer is documented for this route`);
  const schema = documented.find(([s]) => s === status)?.[1];
  if (schema === undefined) throw new Error(`${what}: the documented success statuses are ${documented.map(([s]) => s).join(', ')}`);
  const parsed = parseOrThrow(schema, body, `the body of ${what}`);
  if (status === 201) {
    const { id } = parsed as z.output<typeof recordReceiptSchema>;
    if (headers.get('location') !== `/api/v1/record/${id}`) throw new Error(`${what} has Location ${headers.get('location')}, not /api/v1/record/${id}`);
  }
  if (schema === recordSchema) {
    const { version } = parsed as z.output<typeof recordSchema>;
    if (headers.get('etag') !== `"${version}"`) throw new Error(`${what} has ETag ${headers.get('etag')}, not "${version}" (the record's version)`);
  }
}
