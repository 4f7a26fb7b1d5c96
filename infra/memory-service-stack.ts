import { CfnOutput, Lazy, Stack, Validations, type CfnResource, type StackProps } from 'aws-cdk-lib';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { Construct } from 'constructs';
import { useBedrockClassifier } from './bedrock-classifier.js';
import { MemoryApi } from './constructs/api.js';
import { MemoryConsole } from './constructs/console.js';
import { FORGET_MAX_RECEIVES, MemoryData } from './constructs/data.js';
import { FUNCTION_SIZING, MemoryFunction } from './constructs/functions.js';
import { Observability } from './constructs/observability.js';
import { MemorySearch, SEARCH_ACTIONS } from './constructs/search.js';
import { SERVICE_FUNCTIONS, type ServiceFunctionName } from './lambda-bundling.js';
import { stageConfig } from './stage.js';

export interface MemoryServiceStackProps extends StackProps {
  /** `dev` or `prod`, from `-c stage=…`. */
  stage: string;
}

/** The names the functions and the dashboard use for metrics. */
export const SERVICE_NAME = 'memory';
export const METRICS_NAMESPACE = 'AgentMemory';
/** The alias the functions read and write; the custom resource creates it. */
export const RECORDS_ALIAS = 'memory-records';

/**
 * The AWS deployment of the memory service: API Gateway and its authorizer in front of the Lambda
 * handlers, DynamoDB as the system of record, its stream into the indexer (OpenSearch and the
 * classification queue), the classifier on SQS, the forget worker on its own queue, the web console on
 * CloudFront, and the alarms and dashboard. Every permission is a grant of exactly what one function does.
 */
export class MemoryServiceStack extends Stack {
  readonly functions: Record<ServiceFunctionName, MemoryFunction>;

  constructor(scope: Construct, id: string, props: MemoryServiceStackProps) {
    super(scope, id, { ...props, description: `Memory service for AI agents (${props.stage})` });
    const stage = stageConfig(props.stage);

    const data = new MemoryData(this, 'Data', {
      stage,
      classifierTimeout: FUNCTION_SIZING.classifier.timeout,
      forgetWorkerTimeout: FUNCTION_SIZING['forget-worker'].timeout,
    });
    const { tables } = data;
    const common = {
      MEMORY_RECORDS_TABLE: tables.records.tableName,
      MEMORY_TENANTS_TABLE: tables.tenants.tableName,
      MEMORY_USAGE_TABLE: tables.usage.tableName,
      MEMORY_IDEMPOTENCY_TABLE: tables.idempotency.tableName,
      OPENSEARCH_INDEX: RECORDS_ALIAS,
      POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
      POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
    };
    const search = new MemorySearch(this, 'Search', { stage, alias: RECORDS_ALIAS, environment: common });
    const environment = {
      ...common,
      OPENSEARCH_ENDPOINT: search.endpoint,
      CLASSIFICATION_QUEUE_URL: data.classificationQueue.queueUrl,
      FORGET_QUEUE_URL: data.forgetQueue.queueUrl,
      // The worker marks a job failed on its last delivery, so it must know the queue's maxReceiveCount.
      FORGET_MAX_RECEIVES: String(FORGET_MAX_RECEIVES),
    };
    const fn = Object.fromEntries(
      SERVICE_FUNCTIONS.map((name) => [name, new MemoryFunction(this, name, { stage, environment })]),
    ) as Record<ServiceFunctionName, MemoryFunction>;
    this.functions = fn;

    // Exactly the item actions each function's code performs (a transaction is authorized per item). The record
    // function puts records, marks those a write supersedes (conditional Updates in its transaction), and updates
    // one in place: it reads it first (GetItem), with the tenant's running forget jobs (Query), as a GET does.
    tables.records.grant(fn.record, 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:GetItem');
    tables.tenants.grant(fn.record, 'dynamodb:Query');
    tables.usage.grant(fn.record, 'dynamodb:UpdateItem');
    tables.idempotency.grant(fn.record, 'dynamodb:PutItem', 'dynamodb:GetItem');
    tables.usage.grant(fn.query, 'dynamodb:UpdateItem');
    // The query function checks its hits against the table (one strongly consistent BatchGetItem) and the
    // tenant's running forget jobs (one Query), so a record deleted while the index lags is never returned.
    tables.records.grant(fn.query, 'dynamodb:BatchGetItem');
    tables.tenants.grant(fn.query, 'dynamodb:Query');
    // Reads: a record by id, a listing (16 partition queries), and the running forget jobs that hide records.
    tables.records.grant(fn.read, 'dynamodb:GetItem', 'dynamodb:Query');
    tables.tenants.grant(fn.read, 'dynamodb:Query');
    // Only the read function seals and opens listing cursors, so only it knows where the key is and may read it.
    fn.read.addEnvironment('MEMORY_CURSOR_SECRET_ARN', data.cursorKey.secretArn);
    data.cursorKey.grantRead(fn.read);
    // The only API function that may delete: a record by id (its old image tells whether it was there; a key
    // bound to an agent reads the record first, to delete only its agent's), a forget's matches (by ids, or by
    // its selectors' partition queries); a large forget is a job item in the tenants table and a message to
    // the worker. It reads the jobs back for the status route.
    tables.records.grant(fn.forget, 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:BatchGetItem');
    tables.tenants.grant(fn.forget, 'dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:Query');
    data.forgetQueue.grant(fn.forget, 'sqs:SendMessage');
    // The worker finds a job's records by partition queries (a job never names ids: a forget of ids is at
    // most FORGET_IDS_MAX, which runs within the request), deletes them, and counts and ends the job (its
    // status updated and its running item deleted, in one transaction: forget-jobs.ts).
    tables.records.grant(fn['forget-worker'], 'dynamodb:Query', 'dynamodb:DeleteItem');
    tables.tenants.grant(fn['forget-worker'], 'dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem');
    // `GET /api/v1/usage`: one strongly consistent GetItem of the tenant's counters for the month. It reads
    // the quotas and rate limit from the authorizer's answer, so nothing else.
    tables.usage.grant(fn.usage, 'dynamodb:GetItem');
    // GET /healthz: one GetItem of a key no record has.
    tables.records.grant(fn.health, 'dynamodb:GetItem');
    // The authorizer reads a key and its tenant, and writes the day the key was last used on (at most once a
    // day per key, conditionally).
    tables.tenants.grant(fn.authorizer, 'dynamodb:GetItem', 'dynamodb:UpdateItem');
    tables.records.grant(fn.classifier, 'dynamodb:GetItem', 'dynamodb:UpdateItem');
    search.grant(fn.query.role!, SEARCH_ACTIONS.read, [`${RECORDS_ALIAS}*/_search`]);
    search.grant(fn.indexer.role!, SEARCH_ACTIONS.write, [`${RECORDS_ALIAS}*/_bulk`, '_bulk']);
    data.classificationQueue.grantSendMessages(fn.indexer);
    // The mapping is strict: a deploy that adds a field puts it on the indices (the setup custom resource)
    // before the indexer's new code writes documents that carry it.
    // The function alone, not its role: the domain's access policy names the role, and the setup needs the domain.
    (fn.indexer.node.defaultChild as CfnResource).addResourceDependency(search.indexSetup.node.defaultChild as CfnResource, 'the index mapping before documents that use it');

    // The stream: partial failures reported by sequence number, a failing batch halved until the bad
    // record stands alone, a bounded number of retries, and what still fails goes to a queue to inspect.
    fn.indexer.addEventSource(
      new DynamoEventSource(tables.records, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        reportBatchItemFailures: true,
        bisectBatchOnError: true,
        retryAttempts: 5,
        onFailure: new SqsDlq(data.streamFailures),
      }),
    );
    fn.classifier.addEventSource(
      new SqsEventSource(data.classificationQueue, { batchSize: 10, reportBatchItemFailures: true }),
    );
    // One job per invocation: a job can take the worker's whole 15 minutes.
    fn['forget-worker'].addEventSource(new SqsEventSource(data.forgetQueue, { batchSize: 1, reportBatchItemFailures: true }));
    // `-c bedrockModelId=…` has the worker (only it: `POST /v1/classify` stays in process) ask that model
    // on Bedrock, with the linear model as its fallback (docs/deploy.md).
    const bedrockModelId: unknown = this.node.tryGetContext('bedrockModelId');
    if (typeof bedrockModelId === 'string' && bedrockModelId !== '') useBedrockClassifier(fn.classifier, bedrockModelId);

    // The console's distribution names the API (its CSP) and the API names the console's origin (CORS):
    // the API takes the origin lazily, filled in at synthesis once the console exists.
    const consoleOrigin = Lazy.string({ produce: () => webConsole.origin });
    const api = new MemoryApi(this, 'Api', { stage, functions: fn, consoleOrigin });
    const webConsole = new MemoryConsole(this, 'Console', { stage, api: api.api });
    Validations.of(api.api.deploymentStage).acknowledge({
      id: 'AwsSolutions-APIG3',
      reason: 'Every request is authenticated by key and throttled per key by usage plans; a WAF web ACL (about USD 5 a month plus USD 0.60 per million requests) is left to the platform team, which can attach its own (docs/deploy.md).',
    });
    const observability = new Observability(this, 'Observability', {
      stage,
      api: api.api,
      functions: fn,
      classificationDlq: data.classificationDlq,
      streamFailures: data.streamFailures,
      forgetDlq: data.forgetDlq,
      forgetWorkerLogGroup: fn['forget-worker'].logGroup,
      metricsNamespace: METRICS_NAMESPACE,
      serviceName: SERVICE_NAME,
      authorizerLogGroup: fn.authorizer.logGroup,
    });
    // `-c alarmEmail=oncall@example.com` subscribes an address to every alarm (it must confirm by mail).
    const alarmEmail: unknown = this.node.tryGetContext('alarmEmail');
    if (typeof alarmEmail === 'string' && alarmEmail !== '') {
      observability.alarmTopic.addSubscription(new EmailSubscription(alarmEmail));
    }

    new CfnOutput(this, 'ApiUrl', { value: api.api.url, description: 'The base URL agents call: <ApiUrl>api/v1/record, <ApiUrl>api/v1/query' });
    new CfnOutput(this, 'ConsoleUrl', {
      value: webConsole.url,
      description: 'The web console: open it and paste an API key (it calls ApiUrl, which answers CORS for this origin only)',
    });
    new CfnOutput(this, 'RecordsTable', { value: tables.records.tableName });
    new CfnOutput(this, 'TenantsTable', { value: tables.tenants.tableName });
    new CfnOutput(this, 'UsageTable', { value: tables.usage.tableName });
    new CfnOutput(this, 'IdempotencyTable', { value: tables.idempotency.tableName });
    new CfnOutput(this, 'ApiId', { value: api.api.restApiId });
    new CfnOutput(this, 'ApiStage', { value: api.api.deploymentStage.stageName });
    new CfnOutput(this, 'DefaultUsagePlanId', { value: api.defaultUsagePlan.usagePlanId });
    new CfnOutput(this, 'AdminCli', {
      value:
        'Run the admin CLI against this stack with MEMORY_BACKEND=dynamodb, AWS_REGION, the four MEMORY_*_TABLE names, ' +
        'MEMORY_API_ID, MEMORY_API_STAGE and MEMORY_DEFAULT_USAGE_PLAN_ID from these outputs (docs/deploy.md).',
    });
  }
}
