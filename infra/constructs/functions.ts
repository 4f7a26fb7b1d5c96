import { Duration, Validations } from 'aws-cdk-lib';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { LAMBDA_ESBUILD, type ServiceFunctionName, type SetupFunctionName } from '../lambda-bundling.js';
import type { StageConfig } from '../stage.js';

/**
 * Memory and timeout of each function, chosen on purpose. Lambda gives CPU in proportion to memory, and
 * a JSON-and-one-network-call handler is done in a few ms at 512 MB on ARM, so more buys nothing.
 */
export const FUNCTION_SIZING: Record<ServiceFunctionName | SetupFunctionName, { memoryMiB: number; timeout: Duration }> = {
  // API Gateway waits at most 29 s; a handler that has not answered in 10 s will not.
  record: { memoryMiB: 512, timeout: Duration.seconds(10) },
  query: { memoryMiB: 512, timeout: Duration.seconds(10) },
  // Pure CPU (the classifier runs in process): more memory is more CPU and a lower p99.
  classify: { memoryMiB: 1024, timeout: Duration.seconds(10) },
  // Two strongly consistent reads; it runs at most twice a minute per key thanks to the cache.
  authorizer: { memoryMiB: 256, timeout: Duration.seconds(5) },
  // A batch of up to 100 records of up to ~90 KB each is one bulk request of several MB to build and send.
  indexer: { memoryMiB: 1024, timeout: Duration.seconds(60) },
  classifier: { memoryMiB: 1024, timeout: Duration.seconds(30) },
  // A read is one strongly consistent GetItem, or a listing's 16 partition queries merged: like a search.
  read: { memoryMiB: 512, timeout: Duration.seconds(10) },
  // A forget counts every record its selectors match (pages of 500 from 16 partitions) and deletes up to
  // 1 000 of them 16 at a time before it answers; a larger one becomes a job. Up to just under API
  // Gateway's 29 s, so that a large count still answers rather than ending in a 504 while it runs on.
  forget: { memoryMiB: 1024, timeout: Duration.seconds(28) },
  // A job deletes up to millions of records, one conditional delete each, 16 at a time: Lambda's longest
  // timeout. One that is cut off is delivered again (up to FORGET_MAX_RECEIVES times) and carries on with
  // what is left: what it deleted is gone from its queries.
  'forget-worker': { memoryMiB: 1024, timeout: Duration.minutes(15) },
  // One strongly consistent GetItem of the tenant's counters for the month: like a read by id.
  usage: { memoryMiB: 512, timeout: Duration.seconds(10) },
  // One GetItem, given 2 s to answer before the check says the database does not.
  health: { memoryMiB: 256, timeout: Duration.seconds(5) },
  'search-setup': { memoryMiB: 256, timeout: Duration.minutes(2) },
};

/** The bundling of infra/lambda-bundling.ts, in the CDK's terms: local esbuild, no Docker. */
export const CDK_BUNDLING: BundlingOptions = {
  format: OutputFormat.ESM,
  target: LAMBDA_ESBUILD.target as string,
  minify: true,
  sourceMap: true,
  mainFields: LAMBDA_ESBUILD.mainFields as string[],
  banner: LAMBDA_ESBUILD.banner!.js!,
  // Bundle the AWS SDK at the versions the lockfile pins instead of the runtime's copy.
  externalModules: [],
  forceDockerBundling: false,
};

export interface MemoryFunctionProps {
  stage: StageConfig;
  /** Settings every function reads through shared/adapters/aws/config.ts. */
  environment: Record<string, string>;
}

/** One function of the service: functions/<name>/index.ts on Node 22, ARM64, with its own log group. */
export class MemoryFunction extends NodejsFunction {
  constructor(scope: Construct, name: ServiceFunctionName | SetupFunctionName, props: MemoryFunctionProps) {
    const { memoryMiB, timeout } = FUNCTION_SIZING[name];
    super(scope, name, {
      entry: `functions/${name}/index.ts`,
      handler: 'handler',
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: memoryMiB,
      timeout,
      tracing: Tracing.ACTIVE,
      bundling: CDK_BUNDLING,
      logGroup: new LogGroup(scope, `${name}-logs`, { retention: props.stage.logRetention, removalPolicy: props.stage.removalPolicy }),
      environment: {
        ...props.environment,
        POWERTOOLS_LOG_LEVEL: 'INFO',
        // Stack traces point at the TypeScript sources.
        NODE_OPTIONS: '--enable-source-maps',
      },
    });
    Validations.of(this).acknowledge(
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason: 'The AWS managed basic execution policy only lets the function write its own logs; it is what Lambda needs and nothing more.',
      },
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords accept no resource but *.',
      },
      {
        id: 'AwsSolutions-L1',
        reason: 'nodejs22.x is the runtime the service is built and tested for (the code must also run on Node 20 locally); moving to a newer runtime is a deliberate upgrade.',
      },
    );
  }
}
