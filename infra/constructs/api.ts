import { Duration, Validations } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  ApiKeySourceType,
  AuthorizationType,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  MockIntegration,
  PassthroughBehavior,
  RequestAuthorizer,
  ResponseType,
  RestApi,
  type CorsOptions,
  type IResource,
  type UsagePlan,
} from 'aws-cdk-lib/aws-apigateway';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { OPERATIONS, type ApiFunction } from '../../shared/api/operations.js';
import { AppError, errorBody, type ErrorCode } from '../../shared/domain/errors.js';
import { LIMITS } from '../../shared/domain/record.js';
import { answeredMethods } from '../../shared/http/api-route.js';
import { CONSOLE_ORIGIN_STAGE_VARIABLE, CORS_ALLOWED_HEADERS, corsHeaders } from '../../shared/http/cors.js';
import { internalErrorResult } from '../../shared/http/responses.js';
import { AUTHORIZER_CACHE_TTL_SECONDS } from '../settings.js';
import type { StageConfig } from '../stage.js';

/** What the API needs: the stage's settings and the functions it routes to. */
export interface MemoryApiProps {
  stage: StageConfig;
  /** The function of each operation of the registry (shared/api/operations.ts), the authorizer, and `GET /healthz`'s. */
  functions: Record<ApiFunction | 'authorizer' | 'health', IFunction>;
  /**
   * The web console's origin (`https://<distribution domain>`, a token is fine). When set, the API answers
   * CORS for this origin and no other (see {@link MemoryApi}); when not, it answers no CORS at all.
   */
  consoleOrigin?: string;
}

/**
 * The stage-wide throttle, a backstop above the per-key usage plans: it caps the whole API at a tenth of the
 * account's default regional quota (10 000 requests/s, burst 5 000, shared by every API of the account and
 * region), so a flood across many keys cannot starve the account's other APIs nor run the backend's
 * concurrency up unchecked. It is 50 keys at the default 20/s; raise it together with the account quota.
 */
export const STAGE_THROTTLE = { rateLimit: 1000, burstLimit: 2000 } as const;

/**
 * How long a browser may keep a preflight's answer: two hours, the most Chromium keeps one (Firefox keeps
 * up to a day), so a console session sends about one preflight per route and method every two hours.
 */
export const CORS_PREFLIGHT_MAX_AGE = Duration.hours(2);

/** `GET /healthz`'s own throttle: a monitor checks a few times a minute, and the route has no key to limit. */
export const HEALTH_THROTTLE = { rateLimit: 10, burstLimit: 20 } as const;

/** The `Retry-After` (and `retry_after`) API Gateway's own 429s carry: its token buckets refill every second. */
export const THROTTLE_RETRY_AFTER_SECONDS = 1;

/**
 * The preflight every resource answers for the console's origin: the methods the routes answer, the
 * headers the console sends.
 */
function preflight(origin: string): CorsOptions {
  return {
    allowOrigins: [origin],
    allowMethods: [...new Set(OPERATIONS.flatMap((operation) => answeredMethods(operation.method)))],
    allowHeaders: [...CORS_ALLOWED_HEADERS],
    maxAge: CORS_PREFLIGHT_MAX_AGE,
  };
}

/** The JSON body of an error, built by the same code as the Lambdas' and the local gateway's errors. */
function errorJson(code: ErrorCode, message: string, retryAfter?: number): string {
  return JSON.stringify(errorBody(new AppError(code, message, retryAfter)));
}

const JSON_CONTENT_TYPE = "'application/json'";
const UNAUTHORIZED = errorJson('unauthorized', 'A valid API key is required');
const RATE_LIMITED = errorJson('rate_limited', 'Too many requests; wait retry_after seconds before retrying', THROTTLE_RETRY_AFTER_SECONDS);
// A gateway response template is not run through Velocity; it only substitutes $context variables, so the
// request id goes in as a plain string. The body is the Lambdas' own 500 body, with the message they use.
const INTERNAL_ERROR = internalErrorResult('$context.requestId').body;

/** How API Gateway's own answers are shaped; `statusCode` undefined keeps the status API Gateway chose. */
interface GatewayAnswer {
  type: ResponseType;
  statusCode?: string;
  body: string;
  headers?: Record<string, string>;
}

/**
 * API Gateway's own answers (the requests it refuses before a Lambda runs), mapped to decisions.md's codes
 * and bodies. Exported for the tests.
 */
export const GATEWAY_ANSWERS: readonly GatewayAnswer[] = [
  // No Authorization header (API Gateway refuses it without calling the authorizer), or the authorizer threw
  // "Unauthorized" for an unknown, revoked or malformed key.
  { type: ResponseType.UNAUTHORIZED, statusCode: '401', body: UNAUTHORIZED },
  // A Deny policy, or an Allow that does not cover the method. decisions.md wants a bad key to look exactly
  // like a missing one, so this is the same 401, not API Gateway's 403.
  { type: ResponseType.ACCESS_DENIED, statusCode: '401', body: UNAUTHORIZED },
  // The authorizer accepted the key but API Gateway has no enabled API key for it in a plan of this stage:
  // issuance has not finished, or the key was revoked and its API key disabled while the authorizer's
  // answer is still cached. For the caller, the key does not work: 401 as well.
  { type: ResponseType.INVALID_API_KEY, statusCode: '401', body: UNAUTHORIZED },
  // API Gateway answers an unknown path (and a method no route has) with "Missing Authentication Token".
  { type: ResponseType.MISSING_AUTHENTICATION_TOKEN, statusCode: '404', body: errorJson('not_found', 'No route for this path') },
  { type: ResponseType.RESOURCE_NOT_FOUND, statusCode: '404', body: errorJson('not_found', 'No route for this path') },
  {
    type: ResponseType.THROTTLED,
    statusCode: '429',
    body: RATE_LIMITED,
    headers: { 'Retry-After': `'${THROTTLE_RETRY_AFTER_SECONDS}'` },
  },
  // The usage plans set no quota (the monthly quotas are the Lambdas' business), but should one ever be set,
  // its 429 still has the documented shape.
  {
    type: ResponseType.QUOTA_EXCEEDED,
    statusCode: '429',
    body: RATE_LIMITED,
    headers: { 'Retry-After': `'${THROTTLE_RETRY_AFTER_SECONDS}'` },
  },
  // API Gateway's own limit is 10 MB; the message states the documented one.
  {
    type: ResponseType.REQUEST_TOO_LARGE,
    statusCode: '413',
    body: errorJson('payload_too_large', `The request body must be at most ${LIMITS.requestBytes} bytes`),
  },
  // Only for integrations with mapping templates; none of ours has one, but should it ever happen.
  {
    type: ResponseType.UNSUPPORTED_MEDIA_TYPE,
    statusCode: '415',
    body: errorJson('unsupported_media_type', 'Content-Type must be application/json'),
  },
  // The authorizer crashed or answered something API Gateway cannot read: the service failed, not the key,
  // so 500 and a request id rather than a 401 that would tell the caller to fix a key that is fine.
  { type: ResponseType.AUTHORIZER_FAILURE, statusCode: '500', body: INTERNAL_ERROR },
  { type: ResponseType.AUTHORIZER_CONFIGURATION_ERROR, statusCode: '500', body: INTERNAL_ERROR },
  // Everything else keeps API Gateway's status (403 WAF_FILTERED, 504 INTEGRATION_TIMEOUT, 502 for a crashed
  // Lambda…) with a body of the documented shape.
  { type: ResponseType.DEFAULT_4XX, body: errorJson('invalid_request', 'The request was refused by the API gateway') },
  { type: ResponseType.DEFAULT_5XX, body: INTERNAL_ERROR },
];

/**
 * The access log line, one JSON object per request. Every value is quoted because API Gateway writes `-` for
 * a value it does not have, which would not be valid JSON unquoted. No header or body is logged, so neither
 * the API key nor the payload reaches the logs.
 */
export const ACCESS_LOG_FORMAT: Readonly<Record<string, string>> = {
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  requestTime: '$context.requestTime',
  method: '$context.httpMethod',
  path: '$context.path',
  resourcePath: '$context.resourcePath',
  protocol: '$context.protocol',
  status: '$context.status',
  responseLength: '$context.responseLength',
  latency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  integrationStatus: '$context.integration.status',
  integrationError: '$context.integration.error',
  authorizerStatus: '$context.authorizer.status',
  authorizerLatency: '$context.authorizer.latency',
  authorizerError: '$context.authorizer.error',
  // Set by our authorizer's context: who made the request, for support and per-tenant investigations.
  tenantId: '$context.authorizer.tenantId',
  keyId: '$context.authorizer.keyId',
  apiKeyId: '$context.identity.apiKeyId',
  errorType: '$context.error.responseType',
  errorMessage: '$context.error.message',
  userAgent: '$context.identity.userAgent',
  xrayTraceId: '$context.xrayTraceId',
};

/**
 * The memory service's REST API on API Gateway: the operations of the registry (shared/api/operations.ts) as Lambda proxy integrations behind the
 * REQUEST authorizer, per-key rate limits through usage plans, API Gateway's own errors in the service's
 * JSON shape, JSON access logs, execution logs for errors, and X-Ray tracing.
 *
 * Routing, after authentication (decisions.md: a request without a valid key gets 401 whatever else is
 * wrong with it). An unknown path answers 404 `not_found` from an `ANY` method with a mock integration on
 * the root, on the resources between it and the routes, and on a greedy `{proxy+}` that catches every other
 * path; a known path with another method answers 405 `method_not_allowed` with an `Allow` header, from an
 * `ANY` mock on each route's resource (API Gateway prefers the explicit method, so `ANY` only catches the
 * others). Those mocks are behind the authorizer, as the routes are, but for the health check's 405, which
 * needs no key like the check itself; they need no API key, so only the stage-wide throttle limits them.
 * API Gateway's MISSING_AUTHENTICATION_TOKEN, which no path reaches now, stays remapped to 404.
 *
 * Rate limits per key, with usage plans. The API takes its API key from the authorizer
 * (`ApiKeySourceType.AUTHORIZER`): the authorizer returns the key id as `usageIdentifierKey`, and API
 * Gateway throttles the request by the usage plan that API key belongs to. This construct creates only the
 * default plan (`stage.defaultRate`/`defaultBurst`, no quota) on this stage. The admin CLI must, when it
 * issues a key, create an API Gateway API key whose value is `gatewayKeyValue(key id)` and add it (a usage-plan key) to the
 * default plan, or to a plan per distinct (rate, burst) it creates on demand; until both exist the key is
 * refused with 401 (INVALID_API_KEY). When it revokes a key, it should disable that API key too, so that API
 * Gateway can refuse the key (401) without waiting for the authorizer's cached Allow (30 s) to expire.
 * Trade-offs:
 * - Quotas per account and region: 300 usage plans (adjustable) and 10 000 API keys (not adjustable in
 *   API Gateway's current quota table, though older pages say it was), and a key can be in at most 10
 *   plans. So one plan per distinct (rate, burst), never one per key; 10 000 active keys per region is the
 *   ceiling of this design. CreateApiKey is limited to 5 calls per second per account.
 * - API Gateway applies throttling approximately, on a best-effort basis: a key can briefly exceed its rate,
 *   and limits are not a billing or security control. A 429 from API Gateway carries `retry_after: 1`; it
 *   cannot compute the exact wait as the local token bucket does.
 * - Usage plans and API keys cost nothing extra; requests are billed per REST API call, $3.50 per million
 *   for the first 333 million a month in us-east-1, less per million beyond (the API Gateway pricing page
 *   has each region's rates).
 * - The stage-wide throttle {@link STAGE_THROTTLE} is a backstop for the sum of all keys; per-key limits
 *   above it are capped by it.
 *
 * The console's CORS (only with `consoleOrigin`). Every resource answers `OPTIONS` (the preflight) itself
 * with a mock, for the console's origin alone, with no authorizer and no API key: a browser sends a
 * preflight without the `Authorization` header, so it cannot be authenticated, and it only ever returns
 * these fixed headers. The explicit `OPTIONS` takes precedence over the 405 `ANY`, which keeps answering
 * the other methods. API Gateway's own answers (a 401, a 429…) and those 405s carry the CORS headers too,
 * so that the console can read them; the Lambdas' answers get them from shared/http/cors.ts, which finds the origin in
 * the stage variable {@link CONSOLE_ORIGIN_STAGE_VARIABLE} set here. A stage variable rather than a Lambda
 * environment variable: the origin is the console's distribution, which depends on the API (its CSP names
 * the API's origin), so the functions cannot know it without a cycle, and the handlers stay free of it.
 *
 * Request size. API Gateway refuses bodies over 10 MB (413 `payload_too_large`) and has no setting for a
 * lower limit, so decisions.md's 413 over 1 MiB can only come from the Lambdas. Today they do not check it
 * (shared/http/json-body.ts parses any size): such a body gets the 400 of an oversized or unknown field
 * instead (or is accepted, if the excess is white space), and one over Lambda's 6 MB invocation payload
 * limit fails the invocation (a 5xx).
 */
export class MemoryApi extends Construct {
  readonly api: RestApi;
  readonly authorizer: RequestAuthorizer;
  /** The usage plan for keys with no per-key limit; the admin CLI adds their API keys to it. */
  readonly defaultUsagePlan: UsagePlan;

  constructor(scope: Construct, id: string, props: MemoryApiProps) {
    super(scope, id);
    const { stage, functions, consoleOrigin } = props;

    const accessLogs = new LogGroup(this, 'AccessLogs', { retention: stage.logRetention, removalPolicy: stage.removalPolicy });

    this.api = new RestApi(this, 'Api', {
      restApiName: `memory-service-${stage.name}`,
      description: `Memory service for AI agents (${stage.name})`,
      endpointTypes: [EndpointType.REGIONAL],
      apiKeySourceType: ApiKeySourceType.AUTHORIZER,
      // Access and execution logs need the account's API Gateway CloudWatch role. It is one setting per
      // account and region, shared with every other API there, so the role outlives this stack (CDK retains it).
      cloudWatchRole: true,
      deployOptions: {
        stageName: stage.name,
        tracingEnabled: true,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FORMAT)),
        // Execution logs at ERROR only: they explain a 5xx (an authorizer or integration failure) that the
        // access log only names. Never the request data (it holds keys and records).
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        throttlingRateLimit: STAGE_THROTTLE.rateLimit,
        throttlingBurstLimit: STAGE_THROTTLE.burstLimit,
        // The one route without a key has no usage plan to hold it: its own, lower, limit.
        methodOptions: Object.fromEntries(
          answeredMethods('GET').map((method) => [`/healthz/${method}`, { throttlingRateLimit: HEALTH_THROTTLE.rateLimit, throttlingBurstLimit: HEALTH_THROTTLE.burstLimit }]),
        ),
        ...(consoleOrigin === undefined ? {} : { variables: { [CONSOLE_ORIGIN_STAGE_VARIABLE]: consoleOrigin } }),
      },
      // Inherited by every resource, the root and the intermediate ones (`/api`, `/api/v1`) included.
      ...(consoleOrigin === undefined ? {} : { defaultCorsPreflightOptions: preflight(consoleOrigin) }),
    });

    // API Gateway creates the execution log group on first use, with no retention; creating it first, under
    // the name API Gateway uses, gives it the stage's retention and removal policy.
    const executionLogs = new LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${this.api.restApiId}/${stage.name}`,
      retention: stage.logRetention,
      removalPolicy: stage.removalPolicy,
    });
    this.api.deploymentStage.node.addDependency(executionLogs);

    this.authorizer = new RequestAuthorizer(this, 'Authorizer', {
      authorizerName: 'bearer-api-key',
      handler: functions.authorizer,
      identitySources: [IdentitySource.header('Authorization')],
      resultsCacheTtl: Duration.seconds(AUTHORIZER_CACHE_TTL_SECONDS),
    });

    const integrations = new Map<IFunction, LambdaIntegration>();
    const methodsByPath = new Map<string, { resource: IResource; methods: string[] }>();
    for (const route of OPERATIONS) {
      const fn = functions[route.fn];
      const integration = integrations.get(fn) ?? new LambdaIntegration(fn, { proxy: true });
      integrations.set(fn, integration);
      const resource = this.api.root.resourceForPath(route.path);
      const entry = methodsByPath.get(route.path) ?? { resource, methods: [] };
      // HEAD reaches the same function as GET; API Gateway discards the body of the answer to a HEAD.
      for (const method of answeredMethods(route.method)) {
        resource.addMethod(method, integration, { authorizer: this.authorizer, apiKeyRequired: true });
        entry.methods.push(method);
      }
      methodsByPath.set(route.path, entry);
    }
    // GET /healthz needs no key and reads no tenant's data (docs/api.md, "Health"): no authorizer, no API key.
    const health = this.api.root.addResource('healthz');
    const healthIntegration = new LambdaIntegration(functions.health, { proxy: true });
    const healthMethods = answeredMethods('GET');
    for (const method of healthMethods) {
      const m = health.addMethod(method, healthIntegration, { authorizationType: AuthorizationType.NONE, apiKeyRequired: false });
      Validations.of(m).acknowledge(
        { id: 'AwsSolutions-APIG4', reason: 'The health check answers load balancers and monitors, which hold no key; it reads no tenant data and has its own throttle (HEALTH_THROTTLE).' },
        { id: 'AwsSolutions-COG4', reason: 'The health check is public by design: it says only whether the database answers.' },
      );
    }
    methodsByPath.set('/healthz', { resource: health, methods: [...healthMethods] });
    // A static header value is in single quotes, in a gateway response as in an integration response.
    const cors = consoleOrigin === undefined ? {} : Object.fromEntries(Object.entries(corsHeaders(consoleOrigin)).map(([k, v]) => [k, `'${v}'`]));
    for (const [path, { resource, methods }] of methodsByPath) this.addMethodNotAllowed(resource, methods, cors, path !== '/healthz');
    // A path no route has answers 404 to a valid key, and 401 without one: the root, the resources between it
    // and the routes (`/api`, `/api/v1`, `/v1`), and a greedy catch-all for every other path, each with an
    // ANY behind the authorizer.
    const between = new Set(['/', ...[...methodsByPath.keys()].flatMap((path) => path.split('/').slice(1, -1).map((_, i, parts) => `/${parts.slice(0, i + 1).join('/')}`))]);
    for (const path of between) if (!methodsByPath.has(path)) this.addNotFound(this.api.root.resourceForPath(path), cors);
    this.addNotFound(this.api.root.addResource('{proxy+}'), cors);

    for (const answer of GATEWAY_ANSWERS) {
      this.api.addGatewayResponse(answer.type.responseType, {
        type: answer.type,
        ...(answer.statusCode === undefined ? {} : { statusCode: answer.statusCode }),
        responseHeaders: { 'Content-Type': JSON_CONTENT_TYPE, ...answer.headers, ...cors },
        templates: { 'application/json': answer.body },
      });
    }

    this.defaultUsagePlan = this.api.addUsagePlan('DefaultUsagePlan', {
      name: `memory-${stage.name}-default`,
      description: 'Keys with no rate limit of their own; the admin CLI adds their API keys here',
      throttle: { rateLimit: stage.defaultRate, burstLimit: stage.defaultBurst },
      apiStages: [{ api: this.api, stage: this.api.deploymentStage }],
    });

    this.suppressNagFindings();
    for (const method of this.api.methods.filter((m) => m.httpMethod === 'OPTIONS')) {
      Validations.of(method).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason: "The CORS preflight for the console's origin: a browser sends it without the Authorization header, and this mock only returns fixed CORS headers.",
      });
    }
  }

  /**
   * `ANY` on a route's resource answers 405 with `Allow` (and the console's CORS headers, if any); the route's
   * own methods, and the CORS preflight's `OPTIONS`, take precedence over it.
   */
  private addMethodNotAllowed(resource: IResource, methods: string[], cors: Record<string, string>, authorized: boolean): void {
    const allow = methods.join(', ');
    const headers = Object.entries({ Allow: `'${allow}'`, 'Content-Type': JSON_CONTENT_TYPE, ...cors }).map(
      ([name, value]) => [`method.response.header.${name}`, value] as const,
    );
    // An integration response template is Velocity; $context.httpMethod is a bare HTTP token, safe in JSON.
    const body = JSON.stringify({ error: 'method_not_allowed', message: `$context.httpMethod is not allowed here; use ${allow}` });
    const method = resource.addMethod(
      'ANY',
      new MockIntegration({
        // No request template: the mock then answers with its default integration response, whatever the
        // request's Content-Type or body.
        passthroughBehavior: PassthroughBehavior.WHEN_NO_TEMPLATES,
        integrationResponses: [
          {
            statusCode: '405',
            responseParameters: Object.fromEntries(headers),
            responseTemplates: { 'application/json': body },
          },
        ],
      }),
      {
        ...(authorized ? { authorizer: this.authorizer } : { authorizationType: AuthorizationType.NONE }),
        apiKeyRequired: false,
        methodResponses: [{ statusCode: '405', responseParameters: Object.fromEntries(headers.map(([name]) => [name, true])) }],
      },
    );
    if (!authorized) {
      Validations.of(method).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason: 'The 405 of a route that needs no key (the health check) needs none either; it only answers method_not_allowed.',
      });
    }
  }

  /** `ANY` on a resource that is no route answers 404 `not_found`, behind the authorizer: authentication comes first. */
  private addNotFound(resource: IResource, cors: Record<string, string>): void {
    const headers = Object.entries({ 'Content-Type': JSON_CONTENT_TYPE, ...cors }).map(([name, value]) => [`method.response.header.${name}`, value] as const);
    resource.addMethod(
      'ANY',
      new MockIntegration({
        passthroughBehavior: PassthroughBehavior.WHEN_NO_TEMPLATES,
        integrationResponses: [{ statusCode: '404', responseParameters: Object.fromEntries(headers), responseTemplates: { 'application/json': errorJson('not_found', 'No route for this path') } }],
      }),
      {
        authorizer: this.authorizer,
        apiKeyRequired: false,
        methodResponses: [{ statusCode: '404', responseParameters: Object.fromEntries(headers.map(([name]) => [name, true])) }],
      },
    );
  }

  /** cdk-nag (AwsSolutions) findings that are decisions of this construct, each with its reason; WAF (APIG3) is left to the stack. */
  private suppressNagFindings(): void {
    Validations.of(this.api).acknowledge(
      {
        id: 'AwsSolutions-APIG2',
        reason: 'Requests are validated by the Lambdas (zod schemas in shared/domain), the one place validation lives, so both runtimes answer the same 400 codes.',
      },
      {
        id: 'AwsSolutions-COG4',
        reason: "Callers authenticate with the service's own API keys through a Lambda REQUEST authorizer, not as Cognito users.",
      },
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason: 'AmazonAPIGatewayPushToCloudWatchLogs is the policy AWS provides for the account-wide API Gateway logging role.',
      },
    );
  }
}
