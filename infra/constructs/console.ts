import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DefaultStackSynthesizer, Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  HttpVersion,
  PriceClass,
  ResponseHeadersPolicy,
  S3OriginAccessControl,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership, type BucketProps, type CfnBucket } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY } from 'aws-cdk-lib/cx-api';
import { Construct } from 'constructs';
import { consoleCsp } from '../../shared/http/cors.js';
import type { StageConfig } from '../stage.js';

/** Where the console's built files are, from the repository root (where `cdk` and jest run). */
export const CONSOLE_DIR = 'console/public';

/** The meta in index.html the console reads its API base URL from; empty locally, where it uses its own origin. */
export const API_BASE_URL_META = '<meta name="memory-api-base-url" content="">';

/** What the console needs: the stage's settings and the API it calls. */
export interface MemoryConsoleProps {
  stage: StageConfig;
  api: RestApi;
}

/** index.html with the API's base URL in its meta; throws if the page does not hold the meta exactly once. */
export function withApiBaseUrl(html: string, apiUrl: string): string {
  const parts = html.split(API_BASE_URL_META);
  if (parts.length !== 2) {
    throw new Error(`index.html must contain ${API_BASE_URL_META} exactly once (found ${parts.length - 1}); the console reads the API base URL from it`);
  }
  return parts.join(`<meta name="memory-api-base-url" content="${apiUrl}">`);
}

/**
 * The web console: its static files in a private S3 bucket, served by CloudFront through origin access
 * control, with security headers (a CSP that lets the page call only the API), and redeployed with the
 * API's base URL written into index.html on every `cdk deploy`.
 *
 * Logs. CloudFront's standard logs and the bucket's server access logs go to a log bucket of their own,
 * kept as long as the stage keeps its other logs. Both are free but for the storage.
 *
 * Cost. A console used by a team costs cents a month (docs/deploy.md, "The console"). The price class is
 * the cheapest (North America, Europe and Israel edges); viewers elsewhere are served from the nearest.
 */
export class MemoryConsole extends Construct {
  readonly bucket: Bucket;
  readonly distribution: Distribution;
  /** `https://<distribution domain>`: the origin the API answers CORS for. */
  readonly origin: string;
  /** `https://<distribution domain>/`. */
  readonly url: string;

  constructor(scope: Construct, id: string, props: MemoryConsoleProps) {
    super(scope, id);
    // S3 server access logs are then delivered by a bucket policy for the logging service, as AWS advises,
    // instead of the LogDeliveryWrite ACL (the default while this flag is off). Context must be set first.
    this.node.setContext(S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY, true);
    const { stage, api } = props;
    const stack = Stack.of(this);

    // A dev stack deletes its buckets with the stack, so their objects must go first; prod keeps both.
    const lifecycle: Pick<BucketProps, 'removalPolicy' | 'autoDeleteObjects'> = {
      removalPolicy: stage.removalPolicy,
      autoDeleteObjects: stage.removalPolicy === RemovalPolicy.DESTROY,
    };
    const logs = new Bucket(this, 'Logs', {
      ...lifecycle,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: BucketEncryption.S3_MANAGED,
      // CloudFront's standard logs are delivered with an ACL grant, which needs ACLs enabled.
      objectOwnership: ObjectOwnership.OBJECT_WRITER,
      lifecycleRules: [{ expiration: Duration.days(stage.logRetention) }],
    });
    Validations.of(logs).acknowledge({
      id: 'AwsSolutions-S1',
      reason: "This bucket receives the console's access logs; logging the log bucket would only log the log deliveries.",
    });

    this.bucket = new Bucket(this, 'Bucket', {
      ...lifecycle,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: BucketEncryption.S3_MANAGED,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: logs,
      serverAccessLogsPrefix: 's3/',
    });

    // The API's origin from the RestApi's own id: `api.url` names the stage, and the stage names this
    // distribution (the console's origin is its CORS stage variable), which would be a cycle.
    const apiOrigin = `https://${api.restApiId}.execute-api.${stack.region}.${stack.urlSuffix}`;
    // CloudFront names are unique per account, across regions: the default names (from the construct path)
    // would clash when the same stage is deployed to a second region.
    const cloudFrontName = `${stack.stackName}-console-${stack.region}`;
    const headers = new ResponseHeadersPolicy(this, 'Headers', {
      responseHeadersPolicyName: cloudFrontName,
      comment: 'Security headers of the memory service console',
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: consoleCsp(apiOrigin), override: true },
        strictTransportSecurity: { accessControlMaxAge: Duration.days(730), includeSubdomains: true, override: true },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.NO_REFERRER, override: true },
      },
    });

    this.distribution = new Distribution(this, 'Distribution', {
      comment: `Memory service console (${stage.name})`,
      defaultRootObject: 'index.html',
      defaultBehavior: {
        origin: S3BucketOrigin.withOriginAccessControl(this.bucket, {
          originAccessControl: new S3OriginAccessControl(this, 'OriginAccess', { originAccessControlName: cloudFrontName }),
        }),
        // A redirect rather than HTTPS_ONLY's 403: someone who types the address without https:// gets the
        // console rather than an error. The redirect carries no content and no key (the key is pasted into
        // the page and sent only to the API, over HTTPS), and HSTS keeps the browser on HTTPS afterwards.
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
        cachePolicy: CachePolicy.CACHING_OPTIMIZED,
        responseHeadersPolicy: headers,
      },
      httpVersion: HttpVersion.HTTP2_AND_3,
      priceClass: PriceClass.PRICE_CLASS_100,
      enableLogging: true,
      logBucket: logs,
      logFilePrefix: 'cloudfront/',
    });
    this.origin = `https://${this.distribution.distributionDomainName}`;
    this.url = `${this.origin}/`;
    Validations.of(this.distribution).acknowledge(
      {
        id: 'AwsSolutions-CFR1',
        reason: 'The console is static files; what it shows is behind the API key. Geo restriction, if any, is left to the platform team.',
      },
      {
        id: 'AwsSolutions-CFR2',
        reason: 'A WAF web ACL (about USD 5 a month plus USD 0.60 per million requests) for static files is left to the platform team, as for the API (docs/deploy.md).',
      },
      {
        id: 'AwsSolutions-CFR4',
        reason: "The distribution uses CloudFront's default *.cloudfront.net certificate, which cannot pin a minimum TLS version; a custom domain with its own certificate (TLSv1.2_2021) is left to the platform team.",
      },
    );

    // One deployment for both sources, so that pruning keeps what either brings: the files as they are,
    // and index.html (left out of the first) with the API's base URL, which CloudFormation fills in at
    // deploy time. The distribution is invalidated once the files are in place.
    const html = readFileSync(join(CONSOLE_DIR, 'index.html'), 'utf8');
    const deployment = new BucketDeployment(this, 'Deployment', {
      destinationBucket: this.bucket,
      sources: [Source.asset(CONSOLE_DIR, { exclude: ['index.html'] }), Source.data('index.html', withApiBaseUrl(html, api.url))],
      prune: true,
      distribution: this.distribution,
      distributionPaths: ['/*'],
      // The files keep their names from one deploy to the next: browsers revalidate them on every load
      // (a 304 when unchanged), and CloudFront keeps them a day or until the next deploy's invalidation.
      cacheControl: [CacheControl.maxAge(Duration.seconds(0)), CacheControl.sMaxAge(Duration.days(1))],
      logGroup: new LogGroup(this, 'DeploymentLogs', { retention: stage.logRetention, removalPolicy: stage.removalPolicy }),
    });
    this.suppressDeploymentNagFindings(deployment);
  }

  /**
   * cdk-nag findings on the CDK's deployment function (a stack singleton outside this construct, the parent
   * of its role): what the CDK grants it to copy the files from the asset bucket into the console bucket,
   * prune them there and invalidate the distribution.
   */
  private suppressDeploymentNagFindings(deployment: BucketDeployment): void {
    const handler = deployment.handlerRole.node.scope;
    if (!handler) throw new Error('the bucket deployment role has no function');
    const stack = Stack.of(this);
    const bucketId = stack.getLogicalId(this.bucket.node.defaultChild as CfnBucket);
    Validations.of(handler).acknowledge(
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason: 'The CDK bucket deployment function writes its own logs with the AWS managed basic execution policy, nothing more.',
      },
      ...['s3:GetObject*', 's3:GetBucket*', 's3:List*'].map((action) => ({
        id: `AwsSolutions-IAM5[Action::${action}]`,
        reason: "The CDK's read grant (on the asset bucket and the console bucket): the deployment reads the zipped files and lists what to prune.",
      })),
      ...['s3:DeleteObject*', 's3:Abort*'].map((action) => ({
        id: `AwsSolutions-IAM5[Action::${action}]`,
        reason: "The CDK's write grant on the console bucket alone: the deployment uploads the files and prunes the ones no longer deployed.",
      })),
      {
        id: `AwsSolutions-IAM5[Resource::${assetBucketObjects(stack)}]`,
        reason: 'The CDK asset bucket of this account and region, which holds the zipped console files; read only.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/*]`,
        reason: "The console bucket's objects: every file of the console is the deployment's to write or prune.",
      },
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'cloudfront:CreateInvalidation and GetInvalidation, which the CDK grants on * to invalidate the console distribution after each deployment.',
      },
      { id: 'AwsSolutions-L1', reason: 'The CDK bucket deployment function runs the Python runtime the CDK picks for it.' },
    );
  }
}

/**
 * The CDK asset bucket's objects as cdk-nag names them in a finding: the default synthesizer's bucket, with
 * `<AWS::AccountId>` and `<AWS::Region>` where the stack's environment is not fixed (a plain `cdk synth`).
 */
function assetBucketObjects(stack: Stack): string {
  const synthesizer = stack.synthesizer;
  const qualifier = (synthesizer instanceof DefaultStackSynthesizer ? synthesizer.bootstrapQualifier : undefined) ?? DefaultStackSynthesizer.DEFAULT_QUALIFIER;
  const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
  const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
  return `arn:<AWS::Partition>:s3:::cdk-${qualifier}-assets-${account}-${region}/*`;
}
