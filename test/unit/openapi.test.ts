/**
 * docs/openapi.json: it is exactly what shared/api/openapi.ts generates from the zod schemas, a validator
 * finds it valid, and it states the facts the design documents fix (operations, limits, the bearer scheme,
 * the version label, every error code). The local server's copy is checked in test/e2e/route-security.test.ts.
 */
import { SUGGESTED_MIN_RANK } from '../../shared/domain/rank.js';
import { describe, expect, test } from '@jest/globals';
import { compileErrors, validate } from '@readme/openapi-parser';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { openApiJson } from '../../shared/api/openapi.js';
import { ERROR_STATUS, type ErrorCode } from '../../shared/domain/errors.js';
import { readIdempotencyKey } from '../../shared/domain/idempotency.js';
import { LIMITS } from '../../shared/domain/record.js';
import { errorBodySchema } from '../../shared/domain/schemas.js';
import { OPENAPI_FILE } from '../../scripts/openapi.js';
import { checkAnswer } from '../support/response-shapes.js';

const committed = readFileSync(OPENAPI_FILE, 'utf8');
/** A fresh parse for each use: the validator may change what it is given. */
const documentOf = (text: string = committed): any => JSON.parse(text);
const doc = documentOf();

const OPERATIONS = [
  ['post', '/api/v1/record', 'memory_remember'],
  ['get', '/api/v1/record', 'memory_list'],
  ['get', '/api/v1/record/{id}', 'memory_get'],
  ['patch', '/api/v1/record/{id}', 'memory_update'],
  ['delete', '/api/v1/record/{id}', 'memory_delete'],
  ['post', '/api/v1/forget', 'memory_forget'],
  ['get', '/api/v1/forget/{job_id}', 'memory_forget_status'],
  ['get', '/api/v1/query', 'memory_recall'],
  ['get', '/api/v1/usage', 'memory_usage'],
  ['post', '/v1/classify', 'memory_classify'],
  ['post', '/api/v1/classify', 'memory_classify_alias'],
  ['get', '/healthz', 'health_check'],
] as const;

/** Every response of the document: each operation's, and the reusable ones of components.responses. */
function allResponses(d: any = doc): [where: string, status: string, response: any][] {
  const out: [string, string, any][] = [];
  for (const [path, item] of Object.entries<any>(d.paths)) {
    // The health check answers its own status bodies, not error objects (its own test, below).
    if (path === '/healthz') continue;
    for (const [method, operation] of Object.entries<any>(item)) {
      for (const [status, response] of Object.entries<any>(operation.responses)) out.push([`${method} ${path}`, status, response]);
    }
  }
  for (const [name, response] of Object.entries<any>(d.components.responses)) {
    const status = Object.entries(ERROR_STATUS).find(([code]) => response.description.includes(`\`${code}\``))?.[1];
    out.push([`components.responses.${name}`, String(status), response]);
  }
  return out;
}

/** The codes a response's description lists, in backticks. */
const codesListed = (description: string) => (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => description.includes(`\`${code}\``));

describe('docs/openapi.json', () => {
  test('is the generated document', () => {
    const generated = openApiJson();
    if (committed !== generated) {
      throw new Error('docs/openapi.json differs from what shared/api/openapi.ts generates: run `npm run generate` and commit the file');
    }
    expect(generated.endsWith('}\n')).toBe(true);
  });

  test('is valid OpenAPI 3.1 for @readme/openapi-parser, without warnings', async () => {
    const result = await validate(documentOf());
    if (!result.valid) throw new Error(compileErrors(result));
    expect({ specification: result.specification, warnings: result.warnings }).toEqual({ specification: 'OpenAPI', warnings: [] });
  });

  test('the validator does refuse a broken copy (duplicate operationId, dangling $ref)', async () => {
    const duplicate = documentOf();
    duplicate.paths['/api/v1/classify'].post.operationId = 'memory_classify';
    expect((await validate(duplicate)).valid).toBe(false);
    const dangling = documentOf();
    dangling.paths['/api/v1/query'].get.responses['200'].content['application/json'].schema = { $ref: '#/components/schemas/Nope' };
    expect((await validate(dangling)).valid).toBe(false);
  });

  test('is OpenAPI 3.1.0, labelled with the interface version 2026-05-20', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('2026-05-20');
    expect(doc.info.description).toContain('interface version label, 2026-05-20');
    expect(doc.servers.map((s: { url: string }) => s.url)).toEqual([
      'http://127.0.0.1:8787',
      'https://{apiId}.execute-api.{region}.amazonaws.com/{stage}',
    ]);
  });

  test('has exactly the operations of the interface and of versions 1.1 and 1.2, and the alias, each under its operationId', () => {
    const found = Object.entries<any>(doc.paths).flatMap(([path, item]) => Object.entries<any>(item).map(([method, op]) => [method, path, op.operationId]));
    expect(found).toEqual(OPERATIONS.map((o) => [...o]));
  });

  test('the health check needs no key and answers 200 or 503 with its status', () => {
    const health = doc.paths['/healthz'].get;
    expect(health.security).toEqual([]);
    expect(Object.keys(health.responses)).toEqual(['200', '503']);
    expect(health.responses['200'].content['application/json'].schema.properties.status).toEqual({ const: 'ok' });
    expect(health.responses['503'].content['application/json'].schema.properties.status).toEqual({ const: 'unavailable' });
  });

  test('every other operation needs the bearer key, and only the bearer scheme exists', () => {
    expect(doc.components.securitySchemes).toEqual({ bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }) });
    expect(doc.security).toEqual([{ bearer: [] }]);
    for (const [method, path] of OPERATIONS.filter(([, path]) => path !== '/healthz')) {
      expect(doc.paths[path][method].security).toBeUndefined();
      expect(doc.paths[path][method].responses['401'].description).toContain('`unauthorized`');
    }
  });

  test('states the limits of decisions.md', () => {
    const input = doc.components.schemas.RecordInput;
    expect(input.required).toEqual(['agent_id', 'type', 'title', 'body']);
    expect(input.additionalProperties).toBe(false);
    expect(input.properties.agent_id.maxLength).toBe(LIMITS.agentIdChars);
    expect(input.properties.title.maxLength).toBe(LIMITS.titleChars);
    expect(input.properties.body.description).toContain(`${LIMITS.bodyBytes} bytes in UTF-8`);
    expect(input.properties.metadata.description).toContain(`${LIMITS.metadataBytes} bytes`);
    expect(input.properties.type.enum).toEqual(['fact', 'decision', 'exchange', 'deliverable', 'open_item', 'signal']);

    const params = Object.fromEntries(doc.paths['/api/v1/query'].get.parameters.map((p: any) => [p.name, p]));
    expect(Object.keys(params)).toEqual(['q', 'agent_id', 'type', 'client', 'since', 'until', 'limit', 'include_superseded', 'min_rank']);
    expect(params.min_rank.schema).toEqual({ type: 'number', minimum: 0, maximum: 1 });
    expect(params.min_rank.description).toContain(`${SUGGESTED_MIN_RANK} is the cut-off the judged sets suggest`);
    for (const p of Object.values<any>(params)) expect({ in: p.in, required: p.required }).toEqual({ in: 'query', required: false });
    expect(params.limit.schema).toEqual({ type: 'integer', minimum: 1, maximum: LIMITS.searchLimitMax, default: LIMITS.searchLimitDefault });
    expect(params.agent_id.schema).toEqual({ type: 'string', maxLength: LIMITS.agentIdChars });
    expect(params.client.schema).toEqual({ type: 'string', maxLength: LIMITS.clientChars });
    expect(params.include_superseded.schema).toEqual({ type: 'boolean' });
    expect(input.properties.supersedes).toMatchObject({ type: 'array', maxItems: 20, items: { type: 'string' } });

    const patch = doc.components.schemas.RecordPatch;
    expect(Object.keys(patch.properties)).toEqual(['title', 'body', 'type', 'client', 'metadata']);
    expect(patch.required).toBeUndefined();
    expect(patch.additionalProperties).toBe(false);
  });

  test("the Idempotency-Key header's schema accepts and refuses what the service does", () => {
    const [param] = doc.paths['/api/v1/record'].post.parameters;
    expect({ name: param.name, in: param.in, required: param.required }).toEqual({ name: 'Idempotency-Key', in: 'header', required: false });
    const fits = (key: string) =>
      key.length >= param.schema.minLength && key.length <= param.schema.maxLength && new RegExp(param.schema.pattern).test(key);
    const accepted = (key: string) => {
      try {
        return readIdempotencyKey(key) === key;
      } catch {
        return false;
      }
    };
    for (const key of ['a', 'retry-1', 'k'.repeat(255), '~!{}', 'k'.repeat(256), '', 'with space', 'tab\t', 'é', 'ключ']) {
      expect([key, fits(key)]).toEqual([key, accepted(key)]);
    }
  });

  test('each error response lists its codes, all of its status, and its schema allows exactly those', () => {
    for (const [where, status, response] of allResponses()) {
      if (Number(status) < 400) continue;
      const listed = codesListed(response.description);
      expect([where, status, listed.length > 0]).toEqual([where, status, true]);
      for (const code of listed) expect([where, code, ERROR_STATUS[code]]).toEqual([where, code, Number(status)]);
      const [base, narrowed] = response.content['application/json'].schema.allOf;
      expect(base).toEqual({ $ref: `#/components/schemas/${z.globalRegistry.get(errorBodySchema)?.id}` });
      expect([where, narrowed.properties.error.enum]).toEqual([where, listed]);
    }
  });

  test('every error code of ERROR_STATUS appears in some response', () => {
    const listed = new Set(allResponses().flatMap(([, , response]) => codesListed(response.description)));
    expect((Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => !listed.has(code))).toEqual([]);
  });

  test('429 and 503 answers carry retry_after and Retry-After, 500 answers a request_id, 405 answers Allow', () => {
    for (const [where, status, response] of allResponses()) {
      const narrowed = response.content?.['application/json']?.schema?.allOf?.[1];
      if (status === '429' || status === '503') {
        expect([where, narrowed.required, Object.keys(response.headers)]).toEqual([where, ['retry_after'], ['X-Request-Id', 'Retry-After']]);
      }
      if (status === '500') expect([where, narrowed.required]).toEqual([where, ['request_id']]);
      if (status === '405') expect([where, Object.keys(response.headers)]).toEqual([where, ['X-Request-Id', 'Allow']]);
    }
  });

  test('each operation answers what decisions.md lists for it', () => {
    const statuses = (method: string, path: string) => Object.keys(doc.paths[path][method].responses);
    expect(statuses('post', '/api/v1/record')).toEqual(['201', '400', '401', '403', '404', '413', '414', '415', '422', '429', '431', '500', '507']);
    expect(statuses('patch', '/api/v1/record/{id}')).toEqual(['200', '400', '401', '403', '404', '412', '413', '414', '415', '429', '431', '500']);
    expect(codesListed(doc.paths['/api/v1/record/{id}'].patch.responses['412'].description)).toEqual(['version_conflict']);
    expect(Object.keys(doc.paths['/api/v1/record/{id}'].get.responses['200'].headers)).toEqual(['ETag', 'X-Request-Id']);
    expect(doc.paths['/api/v1/record/{id}'].patch.parameters.map((p: any) => [p.name, p.in])).toEqual([['id', 'path'], ['If-Match', 'header']]);
    expect(statuses('get', '/api/v1/query')).toEqual(['200', '400', '401', '403', '414', '429', '431', '500', '503']);
    for (const path of ['/v1/classify', '/api/v1/classify']) expect(statuses('post', path)).toEqual(['200', '400', '401', '403', '413', '414', '415', '429', '431', '500']);
    expect(codesListed(doc.paths['/api/v1/query'].get.responses['429'].description)).toEqual(['rate_limited', 'query_quota_exceeded']);
    expect(Object.keys(doc.paths['/api/v1/record'].post.responses['201'].headers)).toEqual(['Location', 'Idempotent-Replayed', 'X-Request-Id']);
  });
});

describe('checkAnswer, the e2e suites’ check of real answers against the response schemas', () => {
  const json = (extra: Record<string, string> = {}) => new Headers({ 'content-type': 'application/json', ...extra });
  const receipt = { id: '0190b6a4-6c1e-7000-8000-000000000000', created_at: '2026-05-20T10:00:00.123Z', tenant_id: 't' };
  const location = json({ location: `/api/v1/record/${receipt.id}` });

  test('accepts documented answers', () => {
    expect(() => checkAnswer('POST', '/api/v1/record', 201, location, receipt)).not.toThrow();
    expect(() => checkAnswer('GET', '/api/v1/query?q=x', 200, json(), [])).not.toThrow();
    expect(() => checkAnswer('GET', '/api/v1/query', 429, json({ 'retry-after': '5' }), { error: 'rate_limited', message: 'm', retry_after: 5 })).not.toThrow();
  });

  test.each<[string, () => void]>([
    ['an extra field in a receipt', () => checkAnswer('POST', '/api/v1/record', 201, location, { ...receipt, rank: 1 })],
    ['a created_at without milliseconds', () => checkAnswer('POST', '/api/v1/record', 201, location, { ...receipt, created_at: '2026-05-20T10:00:00Z' })],
    ['a 201 without its Location', () => checkAnswer('POST', '/api/v1/record', 201, json(), receipt)],
    ['an undocumented success status', () => checkAnswer('GET', '/api/v1/query', 201, json(), [])],
    ['a search hit without rank', () => checkAnswer('GET', '/api/v1/query', 200, json(), [{ ...receipt, agent_id: 'a', type: 'fact', title: 't', body: 'b', client: null, metadata: null, classification: null }])],
    ['a suggestion missing a score', () => checkAnswer('POST', '/v1/classify', 200, json(), { type: 'fact', confidence: 1, scores: { fact: 1 }, model: 'm' })],
    ['an error code of another status', () => checkAnswer('GET', '/api/v1/query', 400, json(), { error: 'unauthorized', message: 'm' })],
    ['an unknown error code', () => checkAnswer('GET', '/api/v1/query', 400, json(), { error: 'oops', message: 'm' })],
    ['a 429 without retry_after', () => checkAnswer('GET', '/api/v1/query', 429, json({ 'retry-after': '5' }), { error: 'rate_limited', message: 'm' })],
    ['a 429 whose Retry-After differs', () => checkAnswer('GET', '/api/v1/query', 429, json({ 'retry-after': '4' }), { error: 'rate_limited', message: 'm', retry_after: 5 })],
    ['a 500 without request_id', () => checkAnswer('GET', '/api/v1/query', 500, json(), { error: 'internal_error', message: 'm' })],
    ['a body that is not JSON', () => checkAnswer('GET', '/api/v1/query', 200, new Headers({ 'content-type': 'text/plain' }), [])],
  ])('refuses %s', (_, check) => {
    expect(check).toThrow();
  });
});
