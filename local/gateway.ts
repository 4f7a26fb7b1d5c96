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
import type { Duplex } from 'node:stream';
import { AppError } from '../shared/domain/errors.js';
import { LIMITS } from '../shared/domain/record.js';
import { answeredMethods } from '../shared/http/api-route.js';
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
  /**
   * When given, a count that moves whenever an authorization may have changed (Backend `authGeneration`):
   * a cached answer is reused only while the count is the one read before the authorizer gave it.
   */
  authGeneration?: () => number;
  buckets?: TokenBuckets;
  /** Told of every answer once it is written (the operator's metrics, local/metrics.ts); not of a request whose client went away. */
  onAnswered?: (answer: Answered) => void;
}

/** An answer the gateway wrote, for the operator's metrics. */
export interface Answered {
  /** The path template of the route that answered (`/api/v1/record/{id}`), never the request's path; null when no route has the path. */
  route: string | null;
  method: string;
  status: number;
  /** From the request's arrival to the last byte of the answer handed to the socket. */
  seconds: number;
}

const STAGE = 'local';
const ARN_PREFIX = `arn:aws:execute-api:local:000000000000:local`;

/** The request line and headers Node's parser reads at most; the exact limits below are checked on what it read. */
const REQUEST_HEAD_BYTES = LIMITS.requestBytes;
/** The headers of a request, at most (names, values and their separators). */
const HEADER_BYTES = 64 * 1024;

const methodsOf = (route: Route) => answeredMethods(route.method);

/** What the authorizer and a Lambda's request context are told of the route a request took. */
type RouteName = Pick<Route, 'method' | 'path' | 'name'>;

/** The resource a request no route has is answered by, as API Gateway's greedy catch-all (infra/constructs/api.ts). */
const UNROUTED_PATH = '/{proxy+}';

/** A request whose client hung up before the gateway had read it: there is no one to answer. */
class ClientGone extends Error {}

type AuthorizerContext = Record<string, string>;

/** Maps one HTTP request through the gateway's steps; every answer, including errors, is a proxy result. */
class Gateway {
  private readonly authCache = new Map<string, { context: AuthorizerContext; expiresAt: number; generation: number | undefined }>();
  private readonly buckets: TokenBuckets;

  /** Each route with its path template read once: matching a request splits only the request's path. */
  private readonly templates: { route: Route; template: PathTemplate }[];

  constructor(private readonly options: GatewayOptions) {
    this.buckets = options.buckets ?? new TokenBuckets();
    this.templates = options.routes.map((route) => ({ route, template: pathTemplate(route.path) }));
  }

  /** `seen.route` is set to the template of the route the path matched, as soon as one did, for the metrics. */
  async handle(req: IncomingMessage, requestId: string, seen: { route: string | null }): Promise<APIGatewayProxyResult> {
    checkRequestHead(req);
    const url = targetUrl(req.url ?? '/');
    const method = (req.method ?? 'GET').toUpperCase();
    const segments = url?.pathname.split('/');
    const candidates = this.templates.flatMap(({ route, template }) => {
      const params = segments && matchTemplate(template, segments);
      return params ? [{ ...route, params }] : [];
    });
    const headers = singleValueHeaders(req);
    // Authentication comes first, whatever else is wrong (decisions.md): a path no route has, or a route's
    // path with another method, is 404 or 405 only to a valid key, as on API Gateway, where both are
    // methods behind the authorizer (infra/constructs/api.ts). A path only public routes have needs no key.
    if (!url || candidates.length === 0) {
      await this.authorize(req, { method, path: UNROUTED_PATH, name: 'not_found' }, url ?? new URL('http://localhost/'), headers);
      throw new AppError('not_found', `No route for ${url?.pathname ?? req.url}`);
    }
    // HEAD is answered as GET is, without the body (Node's response leaves it out).
    const route = candidates.find((r) => methodsOf(r).includes(method));
    seen.route = (route ?? candidates[0]!).path;
    if (!route) {
      if (!candidates.every((r) => r.public)) await this.authorize(req, { ...candidates[0]!, method }, url, headers);
      const allowed = candidates.flatMap(methodsOf).join(', ');
      return { ...errorResult(new AppError('method_not_allowed', `${method} is not allowed here; use ${allowed}`)), headers: { 'Content-Type': 'application/json', Allow: allowed } };
    }

    let authorizer: AuthorizerContext = {};
    if (!route.public) {
      authorizer = await this.authorize(req, route, url, headers);
      const taken = this.buckets.take(authorizer.keyId!, Number(authorizer.rate), Number(authorizer.burst));
      if (!taken.ok) throw new AppError('rate_limited', 'Too many requests for this API key', taken.retryAfter);
    }

    const body = await readBody(req);
    const event = proxyEvent(req, method, route, url, headers, body, authorizer, requestId, route.params);
    return route.handler(event, lambdaContext(route.name, requestId));
  }

  /** Runs the authorizer (or reuses its cached answer), as API Gateway does before any route handler. */
  private async authorize(req: IncomingMessage, route: RouteName, url: URL, headers: Record<string, string>): Promise<AuthorizerContext> {
    const identity = headers.authorization;
    if (identity === undefined) throw new AppError('unauthorized', 'A valid API key is required');
    const now = Date.now();
    // Read before the authorizer runs: a change committed after this read moves the count past the answer's.
    const generation = this.options.authGeneration?.();
    const cached = this.authCache.get(identity);
    if (cached && cached.expiresAt > now && cached.generation === generation) return cached.context;

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
    // Frozen: every request of the key shares it while it is cached, and the routes decode it only once.
    Object.freeze(context);
    if (this.options.authCacheMs > 0) {
      if (this.authCache.size >= 10_000) this.authCache.clear();
      this.authCache.set(identity, { context, expiresAt: now + this.options.authCacheMs, generation });
    }
    return context;
  }
}

/**
 * The URL of a request target, or null when it has no path a route could have. The origin form
 * (`/path?query`) is read as written: resolved against a base, as `new URL(target, base)` does, `//x/…` or
 * `/\x/…` would name the host x and leave the rest as the path, so that `//x/api/v1/usage` were served as
 * `/api/v1/usage`. The absolute form (`http://host/path?query`) is read by its path, as RFC 9112 asks of
 * a server. Any other form (`*`, another scheme) is null.
 */
function targetUrl(target: string): URL | null {
  try {
    if (target.startsWith('/')) return new URL(`http://localhost${target}`);
    if (/^https?:\/\//i.test(target)) return new URL(target);
  } catch {
    // Not a URL at all: no route has it.
  }
  return null;
}

/** A route's path (`/api/v1/record/{id}`) by segment: the text a segment must be, or the parameter it names. */
type PathTemplate = ({ text: string } | { param: string })[];

function pathTemplate(path: string): PathTemplate {
  return path.split('/').map((segment) => {
    const param = /^\{(\w+)\}$/.exec(segment)?.[1];
    return param === undefined ? { text: segment } : { param };
  });
}

/** The path parameters of a template that the request path's segments match; null when they do not. */
function matchTemplate(template: PathTemplate, segments: readonly string[]): Record<string, string> | null {
  if (template.length !== segments.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < template.length; i++) {
    const want = template[i]!;
    const got = segments[i]!;
    if ('text' in want) {
      if (want.text !== got) return null;
      continue;
    }
    if (got === '') return null;
    try {
      params[want.param] = decodeURIComponent(got);
    } catch {
      params[want.param] = got;
    }
  }
  return params;
}

/**
 * The path parameters of a route whose path (`/api/v1/record/{id}`) matches the request's, decoded as API
 * Gateway decodes them; null when it does not match. A `{name}` is one whole, non-empty segment.
 */
export function pathParameters(template: string, pathname: string): Record<string, string> | null {
  return matchTemplate(pathTemplate(template), pathname.split('/'));
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

function requestContext(req: IncomingMessage, route: RouteName, requestId: string) {
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

/**
 * Refuses a URL longer than API Gateway's (414) and headers over 64 KiB (431). Node's parser reads up to
 * 1 MiB of request line and headers so that these exact answers can be given here; past that, it cannot
 * tell which of the two was too long (see clientError below).
 */
function checkRequestHead(req: IncomingMessage): void {
  if ((req.url ?? '').length > LIMITS.urlChars) {
    throw new AppError('uri_too_long', `The URL (path and query string) must be at most ${LIMITS.urlChars} characters`);
  }
  let headerBytes = 0;
  for (const part of req.rawHeaders) headerBytes += Buffer.byteLength(part, 'latin1') + 2;
  if (headerBytes > HEADER_BYTES) throw new AppError('headers_too_large', `The request headers must be at most ${HEADER_BYTES} bytes`);
}

/** A request body as API Gateway hands it to a Lambda: text, or base64 when it is not UTF-8 (as for binary media). */
interface RequestBody {
  body: string | null;
  isBase64Encoded: boolean;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Reads the body, refusing more than 1 MiB (413) from the declared length or while it streams in. Bytes
 * that are not UTF-8 are passed on as base64 rather than decoded with replacement characters, so the
 * route's JSON parser can refuse them (shared/http/json-body.ts) instead of storing text that was never sent.
 */
async function readBody(req: IncomingMessage): Promise<RequestBody> {
  const tooLarge = () => new AppError('payload_too_large', `The request body must be at most ${LIMITS.requestBytes} bytes`);
  const length = req.headers['content-length'];
  // A request with neither Content-Length nor Transfer-Encoding has no body (RFC 9112, 6.3), as a search
  // has: Node's parser has ended the stream already, so it is not iterated (which costs more than the search
  // of a rare word). Resuming lets it emit 'end' all the same.
  if ((length === undefined || length === '0') && req.headers['transfer-encoding'] === undefined) {
    req.resume();
    return { body: null, isBase64Encoded: false };
  }
  const declared = Number(length ?? 0);
  if (declared > LIMITS.requestBytes) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > LIMITS.requestBytes) throw tooLarge();
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    // Node aborts the stream with ECONNRESET ("aborted") when the client goes away mid-body.
    if (req.destroyed) throw new ClientGone('the client closed the connection before its request body was read');
    throw error;
  }
  if (size === 0) return { body: null, isBase64Encoded: false };
  const bytes = Buffer.concat(chunks);
  try {
    return { body: utf8.decode(bytes), isBase64Encoded: false };
  } catch {
    return { body: bytes.toString('base64'), isBase64Encoded: true };
  }
}

function proxyEvent(
  req: IncomingMessage,
  method: string,
  route: Route,
  url: URL,
  headers: Record<string, string>,
  { body, isBase64Encoded }: RequestBody,
  authorizer: AuthorizerContext,
  requestId: string,
  params: Record<string, string>,
): APIGatewayProxyEvent {
  const query = Object.fromEntries(url.searchParams);
  return {
    resource: route.path,
    path: url.pathname,
    httpMethod: method,
    headers,
    multiValueHeaders: multiValueHeaders(req),
    queryStringParameters: Object.keys(query).length === 0 ? null : query,
    multiValueQueryStringParameters: Object.keys(query).length === 0 ? null : multiValueQuery(url),
    pathParameters: Object.keys(params).length === 0 ? null : params,
    stageVariables: null,
    body,
    isBase64Encoded,
    requestContext: { ...requestContext(req, route, requestId), authorizer },
  } as unknown as APIGatewayProxyEvent;
}

function send(res: ServerResponse, result: APIGatewayProxyResult, requestId: string): void {
  const headers: Record<string, string | string[]> = { 'X-Request-Id': requestId };
  for (const [k, v] of Object.entries(result.headers ?? {})) headers[k] = String(v);
  for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) headers[k] = v.map(String);
  // Text goes to the socket as it is, counted rather than copied into a Buffer first (Node encodes it as it writes).
  if (result.isBase64Encoded) {
    const body = Buffer.from(result.body, 'base64');
    headers['Content-Length'] = String(body.length);
    res.writeHead(result.statusCode, headers);
    res.end(body);
    return;
  }
  headers['Content-Length'] = String(Buffer.byteLength(result.body, 'utf8'));
  res.writeHead(result.statusCode, headers);
  res.end(result.body, 'utf8');
}

/** A raw HTTP/1.1 error answer for requests Node's parser rejects before they reach the gateway. */
function rawError(status: number, reason: string, code: string, message: string): string {
  const body = JSON.stringify({ error: code, message });
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/**
 * The local API Gateway: the request line and headers (414, 431), routing (404, 405), the REQUEST
 * authorizer with a short cache (401), the per-key token bucket (429), the 1 MiB request limit (413),
 * then the route's Lambda handler. A public route skips the authorizer and the token bucket.
 */
export function createGatewayServer(options: GatewayOptions): Server {
  const gateway = new Gateway(options);
  const server = createServer({ maxHeaderSize: REQUEST_HEAD_BYTES }, (req, res) => {
    const requestId = randomUUID();
    const seen: { route: string | null } = { route: null };
    const { onAnswered } = options;
    if (onAnswered) {
      const started = process.hrtime.bigint();
      res.once('finish', () =>
        onAnswered({ route: seen.route, method: req.method ?? 'GET', status: res.statusCode, seconds: Number(process.hrtime.bigint() - started) / 1e9 }),
      );
    }
    gateway
      .handle(req, requestId, seen)
      .then(
        (result) => send(res, result, requestId),
        (error: unknown) => {
          if (error instanceof ClientGone) {
            options.logger.info('client went away', { request_id: requestId, reason: error.message });
            res.destroy();
            return;
          }
          if (!(error instanceof AppError)) options.logger.error('gateway failure', { request_id: requestId, error: error as Error });
          const result = error instanceof AppError ? errorResult(error) : internalErrorResult(requestId);
          // A body refused for its size: stop reading it, and close the connection once the answer is out.
          if (result.statusCode === 413) {
            res.setHeader('Connection', 'close');
            req.resume();
          }
          send(res, result, requestId);
        },
      )
      .catch((error: unknown) => {
        options.logger.error('failed to write a response', { request_id: requestId, error: error as Error });
        res.destroy();
      });
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    socket.end(
      error.code === 'HPE_HEADER_OVERFLOW'
        ? rawError(
            431,
            'Request Header Fields Too Large',
            'headers_too_large',
            `The request line and headers are larger than ${REQUEST_HEAD_BYTES} bytes together (a URL may have at most ${LIMITS.urlChars} characters, the headers ${HEADER_BYTES} bytes)`,
          )
        : rawError(400, 'Bad Request', 'invalid_request', 'The request is not valid HTTP'),
    );
  });
  // CONNECT asks for a tunnel, which this server never opens; without an answer Node would drop the socket.
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    socket.end(rawError(405, 'Method Not Allowed', 'method_not_allowed', 'CONNECT is not allowed: this server opens no tunnels'));
  });
  return server;
}

