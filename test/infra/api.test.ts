import { Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Method, type CfnAuthorizer, type CfnRestApi, type CfnStage, type CfnUsagePlan } from 'aws-cdk-lib/aws-apigateway';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { CfnLogGroup } from 'aws-cdk-lib/aws-logs';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { HEALTH_THROTTLE, MemoryApi, STAGE_THROTTLE, type MemoryApiProps } from '../../infra/constructs/api.js';
import { OPERATIONS } from '../../shared/api/operations.js';
import { answeredMethods } from '../../shared/http/api-route.js';
import { AUTHORIZER_CACHE_TTL_SECONDS } from '../../infra/settings.js';
import { stageConfig } from '../../infra/stage.js';
import { testApp } from '../support/cdk-app.js';

type Functions = MemoryApiProps['functions'];
type CfnJson = Record<string, any>;

/** A stack with stub functions (inline code, so nothing is bundled) and the API under test. */
function synth(stageName: 'dev' | 'prod' = 'dev') {
  const app = testApp();
  const stack = new Stack(app, 'ApiTest', { env: { account: '123456789012', region: 'eu-west-1' } });
  const stub = (id: string) =>
    new lambda.Function(stack, id, {
      code: lambda.Code.fromInline('exports.handler = async () => ({})'),
      runtime: lambda.Runtime.NODEJS_22_X,
      handler: 'index.handler',
    });
  const functions: Functions = {
    record: stub('Record'),
    query: stub('Query'),
    classify: stub('Classify'),
    read: stub('Read'),
    forget: stub('Forget'),
    usage: stub('Usage'),
    health: stub('Health'),
    authorizer: stub('Authorizer'),
  };
  const memoryApi = new MemoryApi(stack, 'MemoryApi', { stage: stageConfig(stageName), functions });
  const template = Template.fromStack(stack);
  const logicalId = (construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as lambda.CfnFunction);
  return { stack, memoryApi, functions, template, logicalId };
}

const dev = synth('dev');

/** The resources of one type, as [logical id, properties] pairs. */
function resourcesOf(template: Template, type: string): [string, CfnJson][] {
  return Object.entries(template.findResources(type)).map(([id, r]) => [id, (r as CfnJson).Properties ?? {}]);
}

/** Each API Gateway resource's full path, from its PathPart and its parents. */
function resourcePaths(template: Template): Map<string, string> {
  const resources = new Map(resourcesOf(template, 'AWS::ApiGateway::Resource'));
  const paths = new Map<string, string>();
  const pathOf = (id: string): string => {
    const props = resources.get(id)!;
    const parent = props.ParentId as CfnJson;
    const prefix = 'Ref' in parent ? pathOf(parent.Ref as string) : '';
    return `${prefix}/${props.PathPart as string}`;
  };
  for (const id of resources.keys()) paths.set(id, pathOf(id));
  return paths;
}

/** Every method as "METHOD /path" with its properties. */
function methods(template: Template): Map<string, CfnJson> {
  const paths = resourcePaths(template);
  const out = new Map<string, CfnJson>();
  for (const [, props] of resourcesOf(template, 'AWS::ApiGateway::Method')) {
    const resourceId = props.ResourceId as CfnJson;
    const path = 'Ref' in resourceId ? paths.get(resourceId.Ref as string)! : '/';
    out.set(`${props.HttpMethod as string} ${path}`, props);
  }
  return out;
}

/** Every operation of the registry as "METHOD /path" and its function, with HEAD beside each GET. */
const ROUTES: [string, keyof Functions][] = OPERATIONS.flatMap(({ method, path, fn }) => answeredMethods(method).map((m): [string, keyof Functions] => [`${m} ${path}`, fn]));
/** The routes without a key: the health check. */
const PUBLIC_ROUTES: [string, keyof Functions][] = [['GET /healthz', 'health'], ['HEAD /healthz', 'health']];
/** The resources that are no route: the root, those between it and the routes, and the greedy catch-all. */
const NOT_FOUND_PATHS = ['/', '/api', '/api/v1', '/v1', '/{proxy+}'];

describe('MemoryApi routes', () => {
  const all = methods(dev.template);
  const authorizerId = dev.stack.getLogicalId(dev.memoryApi.authorizer.node.defaultChild as CfnAuthorizer);

  test.each(ROUTES)('%s is a Lambda proxy to its function, behind the REQUEST authorizer and an API key', (route, fn) => {
    const method = all.get(route);
    expect(method).toBeDefined();
    expect(method).toMatchObject({
      AuthorizationType: 'CUSTOM',
      AuthorizerId: { Ref: authorizerId },
      ApiKeyRequired: true,
      Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' },
    });
    const uri = JSON.stringify(method!.Integration.Uri);
    for (const [name, other] of Object.entries(dev.functions) as [keyof Functions, lambda.Function][]) {
      expect(uri.includes(dev.logicalId(other))).toBe(name === fn);
    }
  });

  test('API Gateway may invoke each route\'s function on the stage for exactly its routes, and no function for another\'s', () => {
    const stageId = dev.stack.getLogicalId(dev.memoryApi.api.deploymentStage.node.defaultChild as CfnStage);
    const invokable = new Map<string, string[]>();
    for (const [, permission] of resourcesOf(dev.template, 'AWS::Lambda::Permission')) {
      expect(permission).toMatchObject({ Action: 'lambda:InvokeFunction', Principal: 'apigateway.amazonaws.com' });
      const parts = permission.SourceArn['Fn::Join'][1] as unknown[];
      // "arn:…:<api>/<stage>/<METHOD>/<path>": only the deployed stage's permissions, not the console's test stage.
      const stageAt = parts.findIndex((part) => (part as CfnJson)?.Ref === stageId);
      if (stageAt < 0) continue;
      const methodAndPath = (parts[stageAt + 1] as string).slice(1);
      const fnId = permission.FunctionName['Fn::GetAtt'][0] as string;
      invokable.set(fnId, [...(invokable.get(fnId) ?? []), methodAndPath.replace('/', ' /')]);
    }
    for (const [name, fn] of Object.entries(dev.functions) as [keyof Functions, lambda.Function][]) {
      if (name === 'authorizer') continue;
      // API Gateway names a path parameter's segment `*` in the ARN.
      const expected = [...ROUTES, ...PUBLIC_ROUTES].filter(([, target]) => target === name).map(([route]) => route.replace(/\{[a-z_]+\}/g, '*'));
      expect({ name, routes: (invokable.get(dev.logicalId(fn)) ?? []).sort() }).toEqual({ name, routes: expected.sort() });
    }
  });

  test('the only other methods are the health check, the 405 catch-alls (one per route path) and the 404s of the paths no route has', () => {
    const routes = [...ROUTES, ...PUBLIC_ROUTES];
    const paths = [...new Set(routes.map(([route]) => route.split(' ')[1]!))];
    const notFound = NOT_FOUND_PATHS.map((p) => `ANY ${p}`);
    expect([...all.keys()].sort()).toEqual([...routes.map(([route]) => route), ...paths.map((p) => `ANY ${p}`), ...notFound].sort());
  });

  test.each(NOT_FOUND_PATHS)('any method on %s answers 404 not_found, behind the authorizer (authentication comes first)', (path) => {
    const method = all.get(`ANY ${path}`)!;
    expect(method).toMatchObject({ AuthorizationType: 'CUSTOM', AuthorizerId: { Ref: authorizerId }, ApiKeyRequired: false, Integration: { Type: 'MOCK', PassthroughBehavior: 'WHEN_NO_TEMPLATES' } });
    const [response, ...others] = method.Integration.IntegrationResponses as CfnJson[];
    expect(others).toEqual([]);
    expect(response).toMatchObject({ StatusCode: '404', ResponseParameters: { 'method.response.header.Content-Type': "'application/json'" } });
    expect(JSON.parse(response!.ResponseTemplates['application/json'] as string)).toEqual({ error: 'not_found', message: 'No route for this path' });
  });

  test.each(PUBLIC_ROUTES)('%s is a Lambda proxy to the health function, with no authorizer and no API key, and a throttle of its own', (route) => {
    expect(all.get(route)).toMatchObject({ AuthorizationType: 'NONE', ApiKeyRequired: false, Integration: { Type: 'AWS_PROXY' } });
    expect(JSON.stringify(all.get(route)!.Integration.Uri)).toContain(dev.logicalId(dev.functions.health));
    const stage = resourcesOf(dev.template, 'AWS::ApiGateway::Stage')[0]![1];
    const settings = (stage.MethodSettings as CfnJson[]).find((s) => s.ResourcePath === '/~1healthz' && s.HttpMethod === route.split(' ')[0]);
    expect(settings).toMatchObject({ ThrottlingRateLimit: HEALTH_THROTTLE.rateLimit, ThrottlingBurstLimit: HEALTH_THROTTLE.burstLimit });
  });

  test.each([
    ['/api/v1/record', 'POST, GET, HEAD'],
    ['/api/v1/record/{id}', 'GET, HEAD, PATCH, DELETE'],
    ['/api/v1/forget', 'POST'],
    ['/api/v1/forget/{job_id}', 'GET, HEAD'],
    ['/api/v1/query', 'GET, HEAD'],
    ['/api/v1/usage', 'GET, HEAD'],
    ['/healthz', 'GET, HEAD'],
    ['/v1/classify', 'POST'],
    ['/api/v1/classify', 'POST'],
  ])('another method on %s answers 405 method_not_allowed with Allow: %s, behind the authorizer unless the route needs no key', (path, allow) => {
    const method = all.get(`ANY ${path}`)!;
    const auth = path === '/healthz' ? { AuthorizationType: 'NONE' } : { AuthorizationType: 'CUSTOM', AuthorizerId: { Ref: authorizerId } };
    expect(method).toMatchObject({ ...auth, ApiKeyRequired: false, Integration: { Type: 'MOCK', PassthroughBehavior: 'WHEN_NO_TEMPLATES' } });
    // No request template, so whatever the body, the mock answers with its default (selection-less) response.
    expect(method.Integration.RequestTemplates).toBeUndefined();
    const responses = method.Integration.IntegrationResponses as CfnJson[];
    expect(responses).toHaveLength(1);
    const [response] = responses as [CfnJson];
    expect(response.SelectionPattern).toBeUndefined();
    expect(response.StatusCode).toBe('405');
    expect(response.ResponseParameters).toEqual({
      'method.response.header.Allow': `'${allow}'`,
      'method.response.header.Content-Type': "'application/json'",
    });
    const body = (response.ResponseTemplates['application/json'] as string).replaceAll('$context.httpMethod', 'PUT');
    expect(JSON.parse(body)).toEqual({ error: 'method_not_allowed', message: `PUT is not allowed here; use ${allow}` });
    expect(method.MethodResponses).toEqual([
      { StatusCode: '405', ResponseParameters: { 'method.response.header.Allow': true, 'method.response.header.Content-Type': true } },
    ]);
  });
});

describe('MemoryApi authorizer and API keys', () => {
  test('the authorizer is a REQUEST authorizer on the Authorization header, cached for the settings TTL', () => {
    const authorizers = resourcesOf(dev.template, 'AWS::ApiGateway::Authorizer');
    expect(authorizers).toHaveLength(1);
    const [[, props]] = authorizers as [[string, CfnJson]];
    expect(props).toMatchObject({
      Type: 'REQUEST',
      IdentitySource: 'method.request.header.Authorization',
      AuthorizerResultTtlInSeconds: AUTHORIZER_CACHE_TTL_SECONDS,
    });
    expect(AUTHORIZER_CACHE_TTL_SECONDS).toBe(30);
    expect(JSON.stringify(props.AuthorizerUri)).toContain(dev.logicalId(dev.functions.authorizer));
  });

  test('API Gateway may invoke the authorizer function', () => {
    const permissions = resourcesOf(dev.template, 'AWS::Lambda::Permission').filter(
      ([, p]) => JSON.stringify(p.FunctionName).includes(dev.logicalId(dev.functions.authorizer)),
    );
    expect(permissions.length).toBeGreaterThan(0);
    expect(permissions[0]![1]).toMatchObject({ Action: 'lambda:InvokeFunction', Principal: 'apigateway.amazonaws.com' });
  });

  test('the API is regional and takes its API key from the authorizer', () => {
    dev.template.hasResourceProperties('AWS::ApiGateway::RestApi', {
      ApiKeySourceType: 'AUTHORIZER',
      EndpointConfiguration: { Types: ['REGIONAL'] },
    });
  });

  test('the default usage plan throttles at the stage defaults, on this stage, with no quota', () => {
    const plans = resourcesOf(dev.template, 'AWS::ApiGateway::UsagePlan');
    expect(plans).toHaveLength(1);
    const [[planId, plan]] = plans as [[string, CfnJson]];
    const stage = stageConfig('dev');
    expect(plan.Throttle).toEqual({ RateLimit: stage.defaultRate, BurstLimit: stage.defaultBurst });
    expect(plan.Quota).toBeUndefined();
    const apiId = dev.stack.getLogicalId(dev.memoryApi.api.node.defaultChild as CfnRestApi);
    const stageId = dev.stack.getLogicalId(dev.memoryApi.api.deploymentStage.node.defaultChild as CfnStage);
    expect(plan.ApiStages).toHaveLength(1);
    expect(plan.ApiStages[0]).toMatchObject({ ApiId: { Ref: apiId }, Stage: { Ref: stageId } });
    expect(dev.stack.getLogicalId(dev.memoryApi.defaultUsagePlan.node.defaultChild as CfnUsagePlan)).toBe(planId);
    // The admin CLI creates the API keys; the stack creates none.
    expect(resourcesOf(dev.template, 'AWS::ApiGateway::ApiKey')).toEqual([]);
  });
});

/** What each of API Gateway's own answers must be, written out from decisions.md. */
const UNAUTHORIZED = { error: 'unauthorized', message: 'A valid API key is required' };
const RATE_LIMITED = { error: 'rate_limited', message: expect.any(String), retry_after: 1 };
const INTERNAL = { error: 'internal_error', message: expect.any(String), request_id: 'REQ-123' };
const EXPECTED_ANSWERS: [string, string, CfnJson, Record<string, string>?][] = [
  ['UNAUTHORIZED', '401', UNAUTHORIZED],
  ['ACCESS_DENIED', '401', UNAUTHORIZED],
  ['INVALID_API_KEY', '401', UNAUTHORIZED],
  ['MISSING_AUTHENTICATION_TOKEN', '404', { error: 'not_found', message: expect.any(String) }],
  ['RESOURCE_NOT_FOUND', '404', { error: 'not_found', message: expect.any(String) }],
  ['THROTTLED', '429', RATE_LIMITED, { 'Retry-After': "'1'" }],
  ['QUOTA_EXCEEDED', '429', RATE_LIMITED, { 'Retry-After': "'1'" }],
  ['REQUEST_TOO_LARGE', '413', { error: 'payload_too_large', message: 'The request body must be at most 1048576 bytes' }],
  ['UNSUPPORTED_MEDIA_TYPE', '415', { error: 'unsupported_media_type', message: expect.any(String) }],
  ['AUTHORIZER_FAILURE', '500', INTERNAL],
  ['AUTHORIZER_CONFIGURATION_ERROR', '500', INTERNAL],
  ['DEFAULT_4XX', 'its own status', { error: 'invalid_request', message: expect.any(String) }],
  ['DEFAULT_5XX', 'its own status', INTERNAL],
];

describe('MemoryApi gateway responses', () => {
  const responses = new Map(resourcesOf(dev.template, 'AWS::ApiGateway::GatewayResponse').map(([, p]) => [p.ResponseType as string, p]));

  test('exactly the expected response types are customized', () => {
    expect([...responses.keys()].sort()).toEqual(EXPECTED_ANSWERS.map(([type]) => type).sort());
  });

  test.each(EXPECTED_ANSWERS)('%s answers %s with the documented JSON body', (type, status, body, headers = {}) => {
    const response = responses.get(type)!;
    // No StatusCode keeps the status API Gateway chose (a 403 WAF block, a 504 timeout…).
    expect(response.StatusCode).toBe(status === 'its own status' ? undefined : status);
    expect(response.ResponseParameters).toEqual({
      'gatewayresponse.header.Content-Type': "'application/json'",
      ...Object.fromEntries(Object.entries(headers).map(([k, v]) => [`gatewayresponse.header.${k}`, v])),
    });
    expect(Object.keys(response.ResponseTemplates as CfnJson)).toEqual(['application/json']);
    const template = response.ResponseTemplates['application/json'] as string;
    // Gateway response templates only substitute $context variables; the request id is the only one used.
    expect(template.replaceAll('$context.requestId', '')).not.toMatch(/[$#]/);
    const parsed = JSON.parse(template.replaceAll('$context.requestId', 'REQ-123')) as CfnJson;
    expect(parsed).toEqual(body);
    expect(parsed.message).toMatch(/\S/);
    if (parsed.retry_after !== undefined) expect(`'${parsed.retry_after}'`).toBe(headers['Retry-After']);
  });

  test('the 500 body is the one the Lambdas send, with the request id in place', () => {
    const template = responses.get('DEFAULT_5XX')!.ResponseTemplates['application/json'] as string;
    expect(template).toBe(
      '{"error":"internal_error","message":"An internal error occurred. Quote the request_id when you report it.","request_id":"$context.requestId"}',
    );
  });
});

describe('MemoryApi stage, logs and tracing', () => {
  const stageProps = () => {
    const stages = resourcesOf(dev.template, 'AWS::ApiGateway::Stage');
    expect(stages).toHaveLength(1);
    return stages[0]![1];
  };

  test('one stage named after the deployment stage, traced with X-Ray', () => {
    expect(stageProps()).toMatchObject({ StageName: 'dev', TracingEnabled: true });
  });

  test('stage-wide throttling backstop and error-level execution logs, without request data', () => {
    expect(stageProps().MethodSettings).toEqual([
      {
        ResourcePath: '/*',
        HttpMethod: '*',
        ThrottlingRateLimit: 1000,
        ThrottlingBurstLimit: 2000,
        LoggingLevel: 'ERROR',
        DataTraceEnabled: false,
      },
      // The health check's own throttle (it has no key, so no usage plan holds it).
      ...['GET', 'HEAD'].map((method) => ({ ResourcePath: '/~1healthz', HttpMethod: method, ThrottlingRateLimit: 10, ThrottlingBurstLimit: 20, DataTraceEnabled: false })),
    ]);
    expect(STAGE_THROTTLE).toEqual({ rateLimit: 1000, burstLimit: 2000 });
    // A backstop for the sum of all keys: well above any one key's default limits, in every stage.
    for (const name of ['dev', 'prod'] as const) {
      expect(STAGE_THROTTLE.rateLimit).toBeGreaterThan(10 * stageConfig(name).defaultRate);
      expect(STAGE_THROTTLE.burstLimit).toBeGreaterThan(10 * stageConfig(name).defaultBurst);
    }
  });

  test('access logs are JSON lines in their own log group, with the request, the outcome and the authorizer error', () => {
    const { AccessLogSetting } = stageProps();
    const accessLogs = dev.memoryApi.node.findChild('AccessLogs');
    const accessLogsId = dev.stack.getLogicalId(accessLogs.node.defaultChild as CfnLogGroup);
    expect(AccessLogSetting.DestinationArn).toEqual({ 'Fn::GetAtt': [accessLogsId, 'Arn'] });
    const format = JSON.parse(AccessLogSetting.Format as string) as Record<string, string>;
    expect(format).toMatchObject({
      requestId: '$context.requestId',
      ip: '$context.identity.sourceIp',
      method: '$context.httpMethod',
      path: '$context.path',
      status: '$context.status',
      latency: '$context.responseLatency',
      authorizerError: '$context.authorizer.error',
    });
    // Every value is a quoted string, so a "-" for a missing value still makes valid JSON.
    for (const value of Object.values(format)) expect(value).toMatch(/^\$context\.[\w.]+$/);
    // Nothing from the request's headers or body (the API key, the records) is logged.
    expect(AccessLogSetting.Format).not.toMatch(/header|input|body/i);
    dev.template.hasResource('AWS::Logs::LogGroup', {
      Properties: { RetentionInDays: 7 },
      DeletionPolicy: 'Delete',
    });
  });

  test('the execution log group exists under the name API Gateway uses, with the stage retention', () => {
    const groups = resourcesOf(dev.template, 'AWS::Logs::LogGroup');
    const execution = groups.filter(([, p]) => JSON.stringify(p.LogGroupName ?? '').includes('API-Gateway-Execution-Logs_'));
    expect(execution).toHaveLength(1);
    expect(execution[0]![1].RetentionInDays).toBe(7);
    const apiId = dev.stack.getLogicalId(dev.memoryApi.api.node.defaultChild as CfnRestApi);
    expect(execution[0]![1].LogGroupName).toEqual({ 'Fn::Join': ['', ['API-Gateway-Execution-Logs_', { Ref: apiId }, '/dev']] });
  });

  test('API Gateway has a CloudWatch role to write the logs with', () => {
    dev.template.resourceCountIs('AWS::ApiGateway::Account', 1);
    dev.template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: { Statement: [{ Principal: { Service: 'apigateway.amazonaws.com' } }] },
    });
  });

  test('prod: stage "prod", three months of logs, kept when the stack is deleted', () => {
    const prod = synth('prod');
    prod.template.hasResourceProperties('AWS::ApiGateway::Stage', { StageName: 'prod' });
    const groups = Object.values(prod.template.findResources('AWS::Logs::LogGroup')) as CfnJson[];
    expect(groups).toHaveLength(2);
    for (const group of groups) {
      expect(group.Properties.RetentionInDays).toBe(90);
      expect(group.DeletionPolicy).toBe('Retain');
    }
    prod.template.hasResourceProperties('AWS::ApiGateway::UsagePlan', { Throttle: { RateLimit: 20, BurstLimit: 40 } });
  });
});

describe('MemoryApi and cdk-nag', () => {
  test('the only AwsSolutions finding left on the API is the WAF one, which the stack decides', () => {
    const report = new AwsSolutionsChecks().validateScope(dev.memoryApi);
    expect(report.violations.map((v) => v.ruleName)).toEqual(['AwsSolutions-APIG3']);
  });

  test('only the health check and its 405 are acknowledged as unauthenticated, never an operation', () => {
    // Operations, their 405s and the 404s are compliant with APIG4 on their own; the acknowledgment sits on
    // GET, HEAD and ANY /healthz, which need no key.
    const acknowledges = (c: IConstruct, rule: string) =>
      c.node.metadata.some(
        (m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY && Object.keys(m.data as object).some((k) => k.replace(/^annotation::/i, '') === rule),
      );
    const acknowledged = dev.stack.node.findAll().filter((c) => acknowledges(c, 'AwsSolutions-APIG4'));
    for (const c of acknowledged) expect(c).toBeInstanceOf(Method);
    const described = acknowledged.map((c) => `${(c as Method).httpMethod} ${(c as Method).resource.path}`);
    expect(described.sort()).toEqual(['ANY /healthz', 'GET /healthz', 'HEAD /healthz']);
  });
});
