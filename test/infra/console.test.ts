import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validations } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { Method } from 'aws-cdk-lib/aws-apigateway';
import type { IConstruct } from 'constructs';
import { CORS_PREFLIGHT_MAX_AGE } from '../../infra/constructs/api.js';
import { API_BASE_URL_META, CONSOLE_DIR, withApiBaseUrl } from '../../infra/constructs/console.js';
import { CONSOLE_ORIGIN_STAGE_VARIABLE, CORS_EXPOSED_HEADERS } from '../../shared/http/cors.js';
import { synthServiceStack } from '../support/service-stack.js';

type CfnJson = Record<string, any>;

/** The one resource of a type whose logical id starts with `prefix`, as [logical id, resource]. */
function only(template: Template, type: string, prefix: string): [string, CfnJson] {
  const found = Object.entries(template.findResources(type)).filter(([id]) => id.startsWith(prefix));
  expect(found.map(([id]) => id)).toHaveLength(1);
  return found[0]! as [string, CfnJson];
}

/** A template value as text: strings as they are, `Ref`s as `<Id>`, `Fn::GetAtt`s as `<Id.Attribute>`, joins joined. */
function text(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as CfnJson;
  if ('Ref' in v) return `<${v.Ref as string}>`;
  if ('Fn::GetAtt' in v) return `<${(v['Fn::GetAtt'] as string[]).join('.')}>`;
  if ('Fn::Join' in v) return (v['Fn::Join'][1] as unknown[]).map(text).join(v['Fn::Join'][0] as string);
  throw new Error(`no text for ${JSON.stringify(value)}`);
}

const dev = synthServiceStack('dev');
const { template } = dev;
const [distributionId, distribution] = only(template, 'AWS::CloudFront::Distribution', 'ConsoleDistribution');
const [bucketId, bucket] = only(template, 'AWS::S3::Bucket', 'ConsoleBucket');
const [logsId, logs] = only(template, 'AWS::S3::Bucket', 'ConsoleLogs');
const [restApiId] = only(template, 'AWS::ApiGateway::RestApi', 'Api');
/** The console's origin as the template writes it. */
const CONSOLE_ORIGIN = `https://<${distributionId}.DomainName>`;

describe('the console (dev)', () => {
  test('cdk-nag AwsSolutions finds nothing unacknowledged, and no resource depends on itself (either would have failed the synthesis above)', () => {
    // Template.fromStack refuses a template with a dependency cycle ("Template is undeployable"), such as the
    // one a CSP built from `api.url` would make: distribution -> stage -> console origin -> distribution.
    expect(template).toBeDefined();
  });

  test('the bucket is private, S3-encrypted, TLS only, owner-enforced, and logs its access to the log bucket', () => {
    expect(bucket.Properties).toMatchObject({
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      LoggingConfiguration: { DestinationBucketName: { Ref: logsId }, LogFilePrefix: 's3/' },
    });
    expect(bucket.Properties.WebsiteConfiguration).toBeUndefined();
    expect(bucket.DeletionPolicy).toBe('Delete');
    const [, policy] = only(template, 'AWS::S3::BucketPolicy', 'ConsoleBucketPolicy');
    const statements = policy.Properties.PolicyDocument.Statement as CfnJson[];
    expect(statements).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Action: 's3:*', Principal: { AWS: '*' }, Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
    // Readers: CloudFront for this distribution only (origin access control), and nobody else but the dev
    // stage's auto-delete function.
    const readers = statements.filter((s) => s.Effect === 'Allow' && [s.Action].flat().some((a: string) => a.startsWith('s3:GetObject')));
    expect(readers).toEqual([
      {
        Effect: 'Allow',
        Action: 's3:GetObject',
        Principal: { Service: 'cloudfront.amazonaws.com' },
        Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucketId, 'Arn'] }, '/*']] },
        Condition: { StringEquals: { 'AWS:SourceArn': expect.anything() } },
      },
    ]);
    expect(text(readers[0]!.Condition.StringEquals['AWS:SourceArn'])).toBe(`arn:<AWS::Partition>:cloudfront::<AWS::AccountId>:distribution/<${distributionId}>`);
  });

  test('the log bucket is private, encrypted, TLS only, and keeps logs as long as the stage keeps its logs', () => {
    expect(logs.Properties).toMatchObject({
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      LifecycleConfiguration: { Rules: [{ ExpirationInDays: 7, Status: 'Enabled' }] },
    });
    // Log delivery by bucket policy, not by the LogDeliveryWrite ACL.
    expect(logs.Properties.AccessControl).toBeUndefined();
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: logsId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({ Effect: 'Allow', Action: 's3:PutObject', Principal: { Service: 'logging.s3.amazonaws.com' } }),
        ]),
      },
    });
    // A dev stack deletes both buckets, so their objects are deleted first.
    template.resourceCountIs('Custom::S3AutoDeleteObjects', 2);
  });

  test('the distribution: origin access control, HTTPS for viewers, index.html at the root, GET and HEAD only, logs', () => {
    const config = distribution.Properties.DistributionConfig;
    expect(config).toMatchObject({
      DefaultRootObject: 'index.html',
      Enabled: true,
      Logging: { Bucket: { 'Fn::GetAtt': [logsId, 'RegionalDomainName'] }, Prefix: 'cloudfront/' },
      DefaultCacheBehavior: {
        ViewerProtocolPolicy: 'redirect-to-https',
        AllowedMethods: ['GET', 'HEAD'],
        ResponseHeadersPolicyId: { Ref: only(template, 'AWS::CloudFront::ResponseHeadersPolicy', 'ConsoleHeaders')[0] },
      },
    });
    expect(config.Origins).toHaveLength(1);
    const [origin] = config.Origins;
    expect(origin).toMatchObject({
      DomainName: { 'Fn::GetAtt': [bucketId, 'RegionalDomainName'] },
      OriginAccessControlId: { 'Fn::GetAtt': [only(template, 'AWS::CloudFront::OriginAccessControl', 'ConsoleOriginAccess')[0], 'Id'] },
      S3OriginConfig: { OriginAccessIdentity: '' },
    });
    template.hasResourceProperties('AWS::CloudFront::OriginAccessControl', {
      OriginAccessControlConfig: { OriginAccessControlOriginType: 's3', SigningBehavior: 'always', SigningProtocol: 'sigv4' },
    });
  });

  test('the security headers: a CSP whose connect-src is the API origin and nothing broader, HSTS, nosniff, DENY, no-referrer', () => {
    const [, policy] = only(template, 'AWS::CloudFront::ResponseHeadersPolicy', 'ConsoleHeaders');
    const config = policy.Properties.ResponseHeadersPolicyConfig.SecurityHeadersConfig;
    expect(config.ContentSecurityPolicy.Override).toBe(true);
    const csp = text(config.ContentSecurityPolicy.ContentSecurityPolicy);
    const directives = Object.fromEntries(csp.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));
    expect(directives).toEqual({
      'default-src': ["'none'"],
      'script-src': ["'self'"],
      'style-src': ["'self'"],
      'img-src': ["'self'", 'data:'],
      // The RestApi's own id (not `api.url`, which names the stage and so the console's origin: a cycle).
      'connect-src': [`https://<${restApiId}>.execute-api.eu-west-1.<AWS::URLSuffix>`],
      'base-uri': ["'none'"],
      'form-action': ["'none'"],
      'frame-ancestors': ["'none'"],
    });
    expect(csp).not.toMatch(/\*|unsafe/);
    expect(config).toMatchObject({
      StrictTransportSecurity: { AccessControlMaxAgeSec: 2 * 365 * 24 * 3600, IncludeSubdomains: true, Override: true },
      ContentTypeOptions: { Override: true },
      FrameOptions: { FrameOption: 'DENY', Override: true },
      ReferrerPolicy: { ReferrerPolicy: 'no-referrer', Override: true },
    });
  });

  test('the deployment: the files as they are, index.html with the API URL, pruned, then the distribution invalidated', () => {
    const [, deployment] = only(template, 'Custom::CDKBucketDeployment', 'ConsoleDeployment');
    const props = deployment.Properties;
    expect(props).toMatchObject({
      DestinationBucketName: { Ref: bucketId },
      Prune: true,
      DistributionId: { Ref: distributionId },
      DistributionPaths: ['/*'],
      SystemMetadata: { 'cache-control': 'max-age=0, s-maxage=86400' },
    });
    expect(props.SourceObjectKeys).toHaveLength(2);
    const [files, page] = (props.SourceObjectKeys as string[]).map((key) => join(dev.outdir, `asset.${key.replace(/\.zip$/, '')}`));
    expect(existsSync(join(CONSOLE_DIR, 'index.html'))).toBe(true);
    // The files asset leaves index.html out, so the two sources never write the same object.
    expect(readdirSync(files!)).not.toContain('index.html');
    expect(readdirSync(files!).sort()).toEqual(readdirSync(CONSOLE_DIR).filter((f) => f !== 'index.html').sort());
    expect(readdirSync(page!)).toEqual(['index.html']);
    // The page's meta holds markers that the deployment replaces with `api.url`: the RestApi, the URL suffix, the stage.
    const html = readFileSync(join(page!, 'index.html'), 'utf8');
    expect(html).not.toContain(API_BASE_URL_META);
    const [, url] = /<meta name="memory-api-base-url" content="([^"]*)">/.exec(html) ?? [];
    const markers = props.SourceMarkers[1] as Record<string, CfnJson>;
    const [stageId] = only(template, 'AWS::ApiGateway::Stage', 'ApiDeploymentStage');
    expect(url!.replace(/<<marker:0xbaba:\d+>>/g, (m) => text(markers[m]))).toBe(`https://<${restApiId}>.execute-api.eu-west-1.<AWS::URLSuffix>/<${stageId}>/`);
    expect(props.SourceMarkers[0]).toEqual({});
  });

  test('index.html: the meta is filled in, and a page without it (or with two) is refused at synthesis', () => {
    const page = `<head>${API_BASE_URL_META}</head>`;
    expect(withApiBaseUrl(page, 'https://api.example/prod/')).toBe('<head><meta name="memory-api-base-url" content="https://api.example/prod/"></head>');
    expect(() => withApiBaseUrl('<head></head>', 'x')).toThrow(/exactly once \(found 0\)/);
    expect(() => withApiBaseUrl(page + page, 'x')).toThrow(/exactly once \(found 2\)/);
  });

  test('the ConsoleUrl output: https://<distribution domain>/, with a description', () => {
    const output = template.findOutputs('ConsoleUrl').ConsoleUrl!;
    expect(text(output.Value)).toBe(`${CONSOLE_ORIGIN}/`);
    expect(output.Description).toMatch(/API key/);
  });
});

describe('the API\'s CORS for the console', () => {
  const methods = Object.values(template.findResources('AWS::ApiGateway::Method')).map((m) => (m as CfnJson).Properties as CfnJson);
  const preflights = methods.filter((m) => m.HttpMethod === 'OPTIONS');

  test('every resource, the root included, answers OPTIONS itself: no authorizer, no API key, a mock', () => {
    const resourceIds = [...Object.keys(template.findResources('AWS::ApiGateway::Resource')).map((id) => ({ Ref: id })), { 'Fn::GetAtt': [restApiId, 'RootResourceId'] }];
    expect(preflights.map((m) => m.ResourceId)).toEqual(expect.arrayContaining(resourceIds));
    expect(preflights).toHaveLength(resourceIds.length);
    for (const method of preflights) {
      expect(method).toMatchObject({ AuthorizationType: 'NONE', ApiKeyRequired: false, Integration: { Type: 'MOCK' } });
      expect(method.AuthorizerId).toBeUndefined();
    }
  });

  test('the preflight allows the console origin only, the routes\' methods and the console\'s headers', () => {
    for (const method of preflights) {
      const [response] = method.Integration.IntegrationResponses as CfnJson[];
      expect(response!.StatusCode).toBe('204');
      const headers = Object.fromEntries(Object.entries(response!.ResponseParameters as CfnJson).map(([k, v]) => [k.replace('method.response.header.', ''), text(v)]));
      expect(headers).toEqual({
        'Access-Control-Allow-Origin': `'${CONSOLE_ORIGIN}'`,
        'Access-Control-Allow-Methods': "'POST,GET,HEAD,PATCH,DELETE'",
        'Access-Control-Allow-Headers': "'Authorization,Content-Type,Idempotency-Key,If-Match'",
        'Access-Control-Max-Age': `'${CORS_PREFLIGHT_MAX_AGE.toSeconds()}'`,
        Vary: "'Origin'",
      });
    }
  });

  test('the routes keep their authorizer and API key, and the 405 catch-alls still answer the other methods, readably', () => {
    const routes = methods.filter((m) => !['OPTIONS', 'ANY'].includes(m.HttpMethod as string));
    expect(routes.length).toBeGreaterThan(0);
    // Every route but the health check's GET and HEAD, which need no key.
    const open = routes.filter((m) => m.AuthorizationType === 'NONE');
    expect(open.map((m) => m.HttpMethod).sort()).toEqual(['GET', 'HEAD']);
    for (const route of routes.filter((m) => !open.includes(m))) expect(route).toMatchObject({ AuthorizationType: 'CUSTOM', ApiKeyRequired: true });
    const catchAlls = methods.filter((m) => m.HttpMethod === 'ANY');
    expect(catchAlls.length).toBeGreaterThan(0);
    for (const method of catchAlls) {
      const [response] = method.Integration.IntegrationResponses as CfnJson[];
      expect(['404', '405']).toContain(response!.StatusCode);
      expect(text(response!.ResponseParameters['method.response.header.Access-Control-Allow-Origin'])).toBe(`'${CONSOLE_ORIGIN}'`);
      if (response!.StatusCode === '405') expect(response!.ResponseParameters['method.response.header.Allow']).toMatch(/^'[A-Z, ]+'$/);
      expect(method.MethodResponses[0].ResponseParameters['method.response.header.Access-Control-Allow-Origin']).toBe(true);
    }
    expect(catchAlls.filter((m) => (m.Integration.IntegrationResponses as CfnJson[])[0]!.StatusCode === '404').length).toBe(5);
  });

  test('API Gateway\'s own answers (401, 404, 429, 5xx…) carry the CORS headers, so the console can read them', () => {
    const responses = Object.values(template.findResources('AWS::ApiGateway::GatewayResponse')).map((r) => (r as CfnJson).Properties as CfnJson);
    expect(responses.map((r) => r.ResponseType)).toEqual(expect.arrayContaining(['UNAUTHORIZED', 'MISSING_AUTHENTICATION_TOKEN', 'THROTTLED', 'DEFAULT_4XX', 'DEFAULT_5XX']));
    for (const response of responses) {
      const params = response.ResponseParameters as CfnJson;
      expect(text(params['gatewayresponse.header.Access-Control-Allow-Origin'])).toBe(`'${CONSOLE_ORIGIN}'`);
      expect(params['gatewayresponse.header.Access-Control-Expose-Headers']).toBe(`'${CORS_EXPOSED_HEADERS.join(', ')}'`);
    }
  });

  test('the stage variable the Lambdas read holds the console origin', () => {
    const [, stage] = only(template, 'AWS::ApiGateway::Stage', 'ApiDeploymentStage');
    expect(Object.keys(stage.Properties.Variables)).toEqual([CONSOLE_ORIGIN_STAGE_VARIABLE]);
    expect(text(stage.Properties.Variables[CONSOLE_ORIGIN_STAGE_VARIABLE])).toBe(CONSOLE_ORIGIN);
  });

  test('the preflights are acknowledged as unauthenticated (APIG4), next to the health check and its 405, never an operation', () => {
    const acknowledges = (c: IConstruct) =>
      c.node.metadata.some(
        (m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY && Object.keys(m.data as object).some((k) => k.replace(/^annotation::/i, '') === 'AwsSolutions-APIG4'),
      );
    const acknowledged = dev.stack.node.findAll().filter(acknowledges);
    // And GET, HEAD and ANY /healthz, which need no key.
    expect(acknowledged.length).toBe(preflights.length + 3);
    for (const c of acknowledged) {
      expect(c).toBeInstanceOf(Method);
      const method = c as Method;
      if (method.httpMethod !== 'OPTIONS') expect(`${method.httpMethod} ${method.resource.path}`).toMatch(/^(GET|HEAD|ANY) \/healthz$/);
    }
  });
});

describe('the console (prod)', () => {
  const { template: prod } = synthServiceStack('prod');

  test('both buckets are kept when the stack is deleted, with nothing auto-deleted; logs are kept three months', () => {
    const [, prodBucket] = only(prod, 'AWS::S3::Bucket', 'ConsoleBucket');
    const [, prodLogs] = only(prod, 'AWS::S3::Bucket', 'ConsoleLogs');
    for (const b of [prodBucket, prodLogs]) expect(b.DeletionPolicy).toBe('Retain');
    prod.resourceCountIs('Custom::S3AutoDeleteObjects', 0);
    expect(prodLogs.Properties.LifecycleConfiguration).toEqual({ Rules: [{ ExpirationInDays: 90, Status: 'Enabled' }] });
  });
});
