import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { OPERATION_SPECS } from '../api/operations.js';

/**
 * The API Gateway stage variable that holds the web console's origin (`https://<distribution domain>`).
 * The stack sets it on the stage (infra/constructs/api.ts); the local gateway sets no stage variables,
 * since there the console is served from the API's own origin and needs no CORS.
 */
export const CONSOLE_ORIGIN_STAGE_VARIABLE = 'consoleOrigin';

/**
 * The request headers the console sends, which a preflight must allow: the key, the JSON body's type, and
 * every header parameter an operation of the registry declares (Idempotency-Key, If-Match).
 */
export const CORS_ALLOWED_HEADERS: readonly string[] = [
  'Authorization',
  'Content-Type',
  ...new Set(OPERATION_SPECS.flatMap(({ headers }) => (headers ?? []).map(({ name }) => String(name)))),
];

/**
 * The response headers the console may read besides the CORS-safelisted ones: where a record was stored,
 * how long to wait after a 429, whether a write was replayed, and the request id to quote.
 */
export const CORS_EXPOSED_HEADERS = ['Location', 'ETag', 'Retry-After', 'Idempotent-Replayed', 'X-Request-Id', 'x-amzn-RequestId'] as const;

/** The CORS headers of an answer to the console's origin: the same on every answer, errors included. */
export function corsHeaders(origin: string): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': origin,
    Vary: 'Origin',
    'Access-Control-Expose-Headers': CORS_EXPOSED_HEADERS.join(', '),
  };
}

/**
 * The Content-Security-Policy of the web console's files: its own scripts, styles and images only, and
 * requests to `connectSrc` (the API's origin) and nowhere else. No inline script or style, no eval, no
 * framing, no forms, no `<base>`. The local server sends it with `'self'` (it serves the API too), CloudFront
 * with the API Gateway origin.
 */
export function consoleCsp(connectSrc: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src ${connectSrc}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

type RouteRequest = Request<APIGatewayProxyEvent, APIGatewayProxyResult>;

/**
 * Adds the CORS headers to the response, when the stage names a console origin and there is a response.
 * It makes a new response rather than changing the one it got, which a handler may share between requests.
 */
function addCorsHeaders(request: RouteRequest): void {
  const origin = request.event.stageVariables?.[CONSOLE_ORIGIN_STAGE_VARIABLE];
  if (!origin || !request.response) return;
  request.response = { ...request.response, headers: { ...request.response.headers, ...corsHeaders(origin) } };
}

/**
 * Lets the web console, served from its own origin, read every answer of a route: success and error alike.
 * The origin comes from the stage variable {@link CONSOLE_ORIGIN_STAGE_VARIABLE}, not from a Lambda
 * environment variable: that would make the functions depend on the console's distribution, which depends
 * on the API (its CSP names the API), which depends on the functions, a cycle; and the handlers stay free
 * of configuration. Without the variable nothing is added. Register it before
 * `httpErrors`: middy runs `after` and `onError` in reverse order, so it then sees the error's response.
 */
export function consoleCors(): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return { after: addCorsHeaders, onError: addCorsHeaders };
}
