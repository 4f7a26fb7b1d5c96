import type { Logger } from '@aws-lambda-powertools/logger';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { AppError } from '../shared/domain/errors.js';
import { LIMITS } from '../shared/domain/record.js';
import { errorResult, internalErrorResult } from '../shared/http/responses.js';
import { lambdaContext } from './lambda-context.js';
import { TokenBuckets } from './token-bucket.js';

export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
export type AuthorizerHandler = (event: APIGatewayRequestAuthorizerEvent, context: Context) => Promise<APIGatewayAuthorizerResult>;

export interface Route {
  method: string;
  path: string;
  /** The Lambda function name, for logs and the fake Lambda context. */
  name: string;
  handler: ProxyHandler;
  /** Answered without authentication or a rate limit, as API Gateway does for a method with no authorizer. */
  public?: boolean;
}

export interface GatewayOptions {
  routes: Route[];
  authorizer: AuthorizerHandler;
  logger: Logger;
  /** How long an Allow answer of the authorizer is reused for the same Authorization header. */
  authCacheMs: number;
  buckets?: TokenBuckets;
}

const STAGE = 'local';
const ARN_PREFIX = `arn:aws:execute-api:local:000000000000:local`;

type AuthorizerContext = Record<string, string>;

/** Maps one HTTP request through the gateway's steps; every answer, including errors, is a proxy result. */
class Gateway {
  private readonly authCache = new Map<string, { context: AuthorizerContext; expiresAt: number }>();
  private readonly buckets: TokenBuckets;

  constructor(private readonly options: GatewayOptions) {
    this.buckets = options.buckets ?? new TokenBuckets();
  }

  async handle(req: IncomingMessage, requestId: string): Promise<APIGatewayProxyResult> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = (req.method ?? 'GET').toUpperCase();
    const candidates = this.options.routes.filter((r) => r.path === url.pathname);
    if (candidates.length === 0) throw new AppError('not_found', `No route for ${url.pathname}`);
    const route = candidates.find((r) => r.method === method);
    if (!route) {
      const allowed = candidates.map((r) => r.method).join(', ');
      return { ...errorResult(new AppError('method_not_allowed', `${method} is not allowed here; use ${allowed}`)), headers: { 'Content-Type': 'application/json', Allow: allowed } };
    }

    const headers = singleValueHeaders(req);
    let authorizer: AuthorizerContext = {};
    if (!route.public) {
      authorizer = await this.authorize(req, route, url, headers);
      const taken = this.buckets.take(authorizer.keyId!, Number(authorizer.rate), Number(authorizer.burst));
      if (!taken.ok) throw new AppError('rate_limited', 'Too many requests for this API key', taken.retryAfter);
    }

    const body = await readBody(req);
    const event = proxyEvent(req, route, url, headers, body, authorizer, requestId);
    return route.handler(event, lambdaContext(route.name, requestId));
  }

  /** Runs the authorizer (or reuses its cached answer), as API Gateway does before any route handler. */
  private async authorize(req: IncomingMessage, route: Route, url: URL, headers: Record<string, string>): Promise<AuthorizerContext> {
    const identity = headers.authorization;
    if (identity === undefined) throw new AppError('unauthorized', 'A valid API key is required');
    const now = Date.now();
    const cached = this.authCache.get(identity);
    if (cached && cached.expiresAt > now) return cached.context;

    let result: APIGatewayAuthorizerResult;
    try {
      result = await this.options.authorizer(
        {
          type: 'REQUEST',
          methodArn: `${ARN_PREFIX}/${STAGE}/${route.method}${route.path}`,
          resource: route.path,
          path: url.pathname,
          httpMethod: route.method,
          headers,
          multiValueHeaders: multiValueHeaders(req),
          pathParameters: null,
          queryStringParameters: Object.fromEntries(url.searchParams),
          multiValueQueryStringParameters: multiValueQuery(url),
          stageVariables: null,
          requestContext: requestContext(req, route, 'authorizer'),
        } as APIGatewayRequestAuthorizerEvent,
        lambdaContext('authorizer'),
      );
    } catch (error) {
      // The authorizer says "Unauthorized" by throwing, as API Gateway expects. Anything else is its own
      // failure, which API Gateway answers with a 500 (AUTHORIZER_FAILURE), not a 401: a good key must not
      // look invalid during an outage.
      if (error instanceof Error && error.message === 'Unauthorized') {
        throw new AppError('unauthorized', 'A valid API key is required');
      }
      this.options.logger.error('authorizer failed', { error: error as Error });
      throw error;
    }
    const allowed = result.policyDocument.Statement.every((s) => s.Effect === 'Allow');
    if (!allowed) throw new AppError('unauthorized', 'A valid API key is required');
    // API Gateway hands the context values to the route handlers as strings.
    const context: AuthorizerContext = { principalId: result.principalId };
    for (const [k, v] of Object.entries(result.context ?? {})) context[k] = String(v);
    if (this.options.authCacheMs > 0) {
      if (this.authCache.size >= 10_000) this.authCache.clear();
      this.authCache.set(identity, { context, expiresAt: now + this.options.authCacheMs });
    }
    return context;
  }
}

function singleValueHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v[v.length - 1]! : v;
  return out;
}

function multiValueHeaders(req: IncomingMessage): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v : [v];
  return out;
}

function multiValueQuery(url: URL): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of url.searchParams) (out[k] ??= []).push(v);
  return out;
}

function requestContext(req: IncomingMessage, route: Route, requestId: string) {
  return {
    accountId: '000000000000',
    apiId: 'local',
    httpMethod: route.method,
    path: `/${STAGE}${route.path}`,
    protocol: `HTTP/${req.httpVersion}`,
    requestId,
    requestTimeEpoch: Date.now(),
    resourceId: route.name,
    resourcePath: route.path,
    stage: STAGE,
    identity: { sourceIp: req.socket.remoteAddress ?? '', userAgent: req.headers['user-agent'] ?? null },
  };
}

/** Reads the body, refusing more than 1 MiB (413) from the declared length or while it streams in. */
async function readBody(req: IncomingMessage): Promise<string | null> {
  const tooLarge = () => new AppError('payload_too_large', `The request body must be at most ${LIMITS.requestBytes} bytes`);
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > LIMITS.requestBytes) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > LIMITS.requestBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return size === 0 ? null : Buffer.concat(chunks).toString('utf8');
}

function proxyEvent(
  req: IncomingMessage,
  route: Route,
  url: URL,
  headers: Record<string, string>,
  body: string | null,
  authorizer: AuthorizerContext,
  requestId: string,
): APIGatewayProxyEvent {
  const query = Object.fromEntries(url.searchParams);
  return {
    resource: route.path,
    path: url.pathname,
    httpMethod: route.method,
    headers,
    multiValueHeaders: multiValueHeaders(req),
    queryStringParameters: Object.keys(query).length === 0 ? null : query,
    multiValueQueryStringParameters: Object.keys(query).length === 0 ? null : multiValueQuery(url),
    pathParameters: null,
    stageVariables: null,
    body,
    isBase64Encoded: false,
    requestContext: { ...requestContext(req, route, requestId), authorizer },
  } as unknown as APIGatewayProxyEvent;
}

function send(res: ServerResponse, result: APIGatewayProxyResult, requestId: string): void {
  const headers: Record<string, string | string[]> = { 'X-Request-Id': requestId };
  for (const [k, v] of Object.entries(result.headers ?? {})) headers[k] = String(v);
  for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) headers[k] = v.map(String);
  const body = result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body, 'utf8');
  headers['Content-Length'] = String(body.length);
  res.writeHead(result.statusCode, headers);
  res.end(body);
}

/** A raw HTTP/1.1 error answer for requests Node's parser rejects before they reach the gateway. */
function rawError(status: number, reason: string, code: string, message: string): string {
  const body = JSON.stringify({ error: code, message });
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/**
 * The local API Gateway: routing (404, 405), the REQUEST authorizer with a short cache (401), the per-key
 * token bucket (429), the 1 MiB request limit (413), then the route's Lambda handler. A public route skips
 * the authorizer and the token bucket.
 */
export function createGatewayServer(options: GatewayOptions): Server {
  const gateway = new Gateway(options);
  const server = createServer({ maxHeaderSize: 64 * 1024 }, (req, res) => {
    const requestId = randomUUID();
    gateway
      .handle(req, requestId)
      .catch((error: unknown) => {
        if (error instanceof AppError) return errorResult(error);
        options.logger.error('gateway failure', { request_id: requestId, error: error as Error });
        return internalErrorResult(requestId);
      })
      .then((result) => {
        if (result.statusCode === 413) {
          // Stop reading a body we refused, and close the connection once the answer is out.
          res.setHeader('Connection', 'close');
          req.resume();
        }
        send(res, result, requestId);
      })
      .catch((error: unknown) => {
        options.logger.error('failed to write a response', { request_id: requestId, error: error as Error });
        res.destroy();
      });
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    socket.end(
      error.code === 'HPE_HEADER_OVERFLOW'
        ? rawError(431, 'Request Header Fields Too Large', 'headers_too_large', 'The request headers are too large')
        : rawError(400, 'Bad Request', 'invalid_request', 'The request is not valid HTTP'),
    );
  });
  return server;
}

