import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { lambdaContext } from '../../local/lambda-context.js';
import { AppError } from '../../shared/domain/errors.js';
import { apiFunction } from '../../shared/http/api-route.js';
import { OPERATION_SPECS } from '../../shared/api/operations.js';
import { CONSOLE_ORIGIN_STAGE_VARIABLE, CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS } from '../../shared/http/cors.js';
import { jsonResult } from '../../shared/http/responses.js';
import { authorizerContext } from '../support/authorizer-context.js';

const logger = new Logger({ logLevel: 'SILENT' });
const ORIGIN = 'https://d111111abcdef8.cloudfront.net';
const CORS = {
  'Access-Control-Allow-Origin': ORIGIN,
  Vary: 'Origin',
  'Access-Control-Expose-Headers': 'Location, ETag, Retry-After, Idempotent-Replayed, X-Request-Id, x-amzn-RequestId',
};

/** A proxy event of `POST /api/v1/record` as API Gateway passes it, from a key with these scopes. */
function event(stageVariables: Record<string, string> | null, scopes = 'read,write,delete', body: string | null = '{"title":"t"}'): APIGatewayProxyEvent {
  return {
    httpMethod: 'POST',
    resource: '/api/v1/record',
    path: '/api/v1/record',
    headers: { 'Content-Type': 'application/json' },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables,
    body,
    isBase64Encoded: false,
    requestContext: { authorizer: authorizerContext({ scopes }) },
  } as unknown as APIGatewayProxyEvent;
}

/** The route chain every function uses, with a handler that answers `answer` or throws it. */
function route(answer: APIGatewayProxyResult | Error) {
  const answerOrThrow = async () => {
    if (answer instanceof Error) throw answer;
    return answer;
  };
  const handler = apiFunction(logger, 'record', { memory_remember: answerOrThrow, memory_update: answerOrThrow });
  return (e: APIGatewayProxyEvent) => handler(e, lambdaContext('record'));
}

const created = jsonResult(201, { id: 'r1' }, { Location: '/api/v1/record/r1' });
const withConsole = { [CONSOLE_ORIGIN_STAGE_VARIABLE]: ORIGIN };

describe('the console CORS middleware', () => {
  test('with the stage variable, a success carries the CORS headers next to its own', async () => {
    const result = await route(created)(event(withConsole));
    expect(result.statusCode).toBe(201);
    expect(result.headers).toEqual({ 'Content-Type': 'application/json', Location: '/api/v1/record/r1', ...CORS });
    expect(CORS_EXPOSED_HEADERS.join(', ')).toBe(CORS['Access-Control-Expose-Headers']);
    // The handler's own result is left as it was (a handler may hand the same object to many requests).
    expect(created.headers).toEqual({ 'Content-Type': 'application/json', Location: '/api/v1/record/r1' });
  });

  test('without the stage variable (the local gateway, or a stage without a console), nothing is added', async () => {
    const without: (Record<string, string> | null)[] = [null, {}, { other: 'x' }, { [CONSOLE_ORIGIN_STAGE_VARIABLE]: '' }];
    for (const stageVariables of without) {
      const result = await route(created)(event(stageVariables));
      expect(result.headers).toEqual({ 'Content-Type': 'application/json', Location: '/api/v1/record/r1' });
    }
    const refused = await route(created)(event(null, 'read'));
    expect(refused.statusCode).toBe(403);
    expect(refused.headers).toEqual({ 'Content-Type': 'application/json' });
  });

  test('an AppError from a middleware (403 for a missing scope, 415 for the body) carries them too', async () => {
    const forbidden = await route(created)(event(withConsole, 'read'));
    expect(forbidden.statusCode).toBe(403);
    expect(JSON.parse(forbidden.body)).toMatchObject({ error: 'forbidden' });
    expect(forbidden.headers).toEqual({ 'Content-Type': 'application/json', ...CORS });

    const notJson = { ...event(withConsole), headers: { 'Content-Type': 'text/plain' } };
    const unsupported = await route(created)(notJson);
    expect(unsupported.statusCode).toBe(415);
    expect(unsupported.headers).toMatchObject(CORS);
  });

  test('an AppError from the handler keeps its own headers (a 429\'s Retry-After) and gets the CORS ones', async () => {
    const result = await route(new AppError('rate_limited', 'slow down', 3))(event(withConsole));
    expect(result.statusCode).toBe(429);
    expect(result.headers).toEqual({ 'Content-Type': 'application/json', 'Retry-After': '3', ...CORS });
  });

  test('an unexpected error\'s 500 carries them, so the console can show its request id', async () => {
    const result = await route(new Error('boom'))(event(withConsole));
    expect(result.statusCode).toBe(500);
    expect(JSON.parse(result.body)).toMatchObject({ error: 'internal_error', request_id: expect.any(String) });
    expect(result.headers).toMatchObject(CORS);
  });
});

describe('the CORS lists and the operations registry', () => {
  test('a preflight allows every header an operation declares, and the key and JSON type', () => {
    const declared = OPERATION_SPECS.flatMap(({ headers }) => (headers ?? []).map(({ name }) => name));
    expect(declared).toEqual(expect.arrayContaining(['Idempotency-Key', 'If-Match']));
    expect(new Set(CORS_ALLOWED_HEADERS)).toEqual(new Set(['Authorization', 'Content-Type', ...declared]));
  });

  test('the console may read every header a successful answer carries', () => {
    const answered = OPERATION_SPECS.flatMap(({ responses }) => Object.values(responses).flatMap(({ headers }) => Object.keys(headers)));
    expect(answered).toEqual(expect.arrayContaining(['Location', 'ETag', 'X-Request-Id']));
    for (const header of answered) expect(CORS_EXPOSED_HEADERS).toContain(header);
  });
});
