import { Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { MockIntegration, RestApi } from 'aws-cdk-lib/aws-apigateway';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSEvent } from 'aws-lambda';
import { createForgetWorker } from '../../functions/forget-worker/handler.js';
import { FORGET_JOB_FAILED_MESSAGE, metricId, Observability } from '../../infra/constructs/observability.js';
import { SERVICE_FUNCTIONS, type ServiceFunctionName } from '../../infra/lambda-bundling.js';
import { stageConfig } from '../../infra/stage.js';
import { lambdaContext } from '../../local/lambda-context.js';
import { USAGE_METRIC } from '../../shared/http/usage-metrics.js';
import { testApp } from '../support/cdk-app.js';

type CfnJson = Record<string, any>;

/** A stack with stub functions (inline code, nothing bundled), a one-method API, three queues and the construct. */
function synth(stageName: 'dev' | 'prod' = 'dev') {
  const app = testApp();
  const stack = new Stack(app, 'ObservabilityTest', { env: { account: '123456789012', region: 'eu-west-1' } });
  const functions = Object.fromEntries(
    SERVICE_FUNCTIONS.map((name) => [
      name,
      new lambda.Function(stack, `Fn-${name}`, {
        code: lambda.Code.fromInline('exports.handler = async () => ({})'),
        runtime: lambda.Runtime.NODEJS_22_X,
        handler: 'index.handler',
      }),
    ]),
  ) as Record<ServiceFunctionName, lambda.Function>;
  const api = new RestApi(stack, 'Api', { restApiName: `memory-service-${stageName}`, deployOptions: { stageName } });
  api.root.addMethod('GET', new MockIntegration());
  const classificationDlq = new Queue(stack, 'ClassificationDlq');
  const streamFailures = new Queue(stack, 'StreamFailures');
  const forgetDlq = new Queue(stack, 'ForgetDlq');
  const forgetWorkerLogGroup = new LogGroup(stack, 'ForgetWorkerLogs');
  const observability = new Observability(stack, 'Observability', {
    stage: stageConfig(stageName),
    api,
    functions,
    classificationDlq,
    streamFailures,
    forgetDlq,
    forgetWorkerLogGroup,
    metricsNamespace: 'AgentMemory',
    serviceName: 'memory',
    authorizerLogGroup: new LogGroup(stack, 'AuthorizerLogs'),
  });
  const template = Template.fromStack(stack);
  const ref = (construct: { node: { defaultChild?: unknown } }) => ({ Ref: stack.getLogicalId(construct.node.defaultChild as lambda.CfnFunction) });
  const queueName = (queue: Queue) => ({ 'Fn::GetAtt': [stack.getLogicalId(queue.node.defaultChild as lambda.CfnFunction), 'QueueName'] });
  return { app, stack, template, observability, functions, api, classificationDlq, streamFailures, forgetDlq, forgetWorkerLogGroup, ref, queueName };
}

const dev = synth('dev');
const topicRef = dev.ref(dev.observability.alarmTopic);

/** The alarms, by name. */
function alarmsByName(template: Template): Map<string, CfnJson> {
  const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')) as CfnJson[];
  return new Map(alarms.map((a) => [a.Properties.AlarmName as string, a.Properties as CfnJson]));
}

/** The dashboard body: its Fn::Join flattened, each token (Ref, GetAtt) replaced by "TOKEN", then parsed. */
function dashboardBody(template: Template): { raw: string; widgets: CfnJson[] } {
  const dashboards = Object.values(template.findResources('AWS::CloudWatch::Dashboard')) as CfnJson[];
  expect(dashboards).toHaveLength(1);
  const body = dashboards[0]!.Properties.DashboardBody;
  const parts: unknown[] = typeof body === 'string' ? [body] : body['Fn::Join'][1];
  const raw = parts.map((part) => (typeof part === 'string' ? part : 'TOKEN')).join('');
  return { raw, widgets: (JSON.parse(raw) as { widgets: CfnJson[] }).widgets };
}

/** The expressions of a metric widget (metrics given as `[{ expression, … }]`). */
const expressionsOf = (widget: CfnJson): CfnJson[] =>
  ((widget.properties.metrics ?? []) as unknown[][]).flatMap((m) => m.filter((x): x is CfnJson => typeof x === 'object' && x !== null && 'expression' in x));

describe('Observability: the alarm topic', () => {
  test('is encrypted with its own rotating KMS key, which CloudWatch may use to publish', () => {
    const [keyId] = Object.keys(dev.template.findResources('AWS::KMS::Key'));
    dev.template.hasResourceProperties('AWS::SNS::Topic', {
      TopicName: 'memory-dev-alarms',
      KmsMasterKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] },
    });
    dev.template.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
            Resource: '*',
          }),
        ]),
      },
    });
  });

  test('refuses publishing without TLS and lets only this account\'s alarms publish', () => {
    dev.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [topicRef],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Principal: '*', Action: 'sns:Publish', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: 'sns:Publish',
            Resource: topicRef,
            Condition: {
              StringEquals: { 'aws:SourceAccount': '123456789012' },
              ArnLike: { 'aws:SourceArn': { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':cloudwatch:eu-west-1:123456789012:alarm:*']] } },
            },
          }),
        ]),
      },
    });
  });

  test('keeps the key in prod, deletes it with a dev stack', () => {
    expect(Object.values(dev.template.findResources('AWS::KMS::Key'))[0]).toMatchObject({ DeletionPolicy: 'Delete' });
    expect(Object.values(synth('prod').template.findResources('AWS::KMS::Key'))[0]).toMatchObject({ DeletionPolicy: 'Retain' });
  });
});

describe('Observability: alarms', () => {
  const alarms = alarmsByName(dev.template);

  test('there are exactly the eight alarms, each notifying the topic on ALARM and on OK, with a description', () => {
    expect([...alarms.keys()].sort()).toEqual(
      [
        'memory-dev-api-5xx-rate',
        'memory-dev-authorizer-failures',
        'memory-dev-classification-dlq',
        'memory-dev-forget-dlq',
        'memory-dev-forget-worker-errors',
        'memory-dev-indexer-iterator-age',
        'memory-dev-lambda-throttles',
        'memory-dev-stream-failures',
      ].sort(),
    );
    for (const alarm of alarms.values()) {
      expect(alarm.AlarmActions).toEqual([topicRef]);
      expect(alarm.OKActions).toEqual([topicRef]);
      expect(alarm.ActionsEnabled).not.toBe(false);
      // CloudWatch refuses descriptions over 1024 characters.
      expect((alarm.AlarmDescription as string).length).toBeGreaterThan(100);
      expect((alarm.AlarmDescription as string).length).toBeLessThanOrEqual(1024);
    }
  });

  const queueAlarms: [string, () => CfnJson][] = [
    ['memory-dev-classification-dlq', () => dev.queueName(dev.classificationDlq)],
    ['memory-dev-stream-failures', () => dev.queueName(dev.streamFailures)],
    ['memory-dev-forget-dlq', () => dev.queueName(dev.forgetDlq)],
  ];
  test.each(queueAlarms)('%s: any visible message in the queue, over one minute', (name, queue) => {
    expect(alarms.get(name)).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: queue() }],
      Statistic: 'Maximum',
      Period: 60,
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
  });

  test('the stream failures alarm says the stream keeps records 24 hours', () => {
    expect(alarms.get('memory-dev-stream-failures')!.AlarmDescription).toMatch(/24 hours/);
  });

  test('the forget DLQ alarm says what to do with a job still running and with a failed one', () => {
    const description = alarms.get('memory-dev-forget-dlq')!.AlarmDescription as string;
    expect(description).toMatch(/forget#<job>/);
    expect(description).toMatch(/running .*redrive/);
    expect(description).toMatch(/failed, a redrive does nothing/);
  });

  test('memory-dev-forget-worker-errors: the failed runs the worker logs plus its Lambda errors (timeouts, crashes), over 5 minutes above 0', () => {
    const alarm = alarms.get('memory-dev-forget-worker-errors')!;
    expect(alarm).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 1, TreatMissingData: 'notBreaching' });
    const queries = alarm.Metrics as CfnJson[];
    expect(queries.filter((q) => q.ReturnData !== false)).toEqual([expect.objectContaining({ Expression: 'FILL(failures, 0) + FILL(errors, 0)' })]);
    const stat = (id: string) => queries.find((q) => q.Id === id)!.MetricStat;
    expect(stat('failures')).toEqual({ Metric: { Namespace: 'AgentMemory', MetricName: 'ForgetJobFailures' }, Period: 300, Stat: 'Sum' });
    expect(stat('errors')).toEqual({
      Metric: { Namespace: 'AWS/Lambda', MetricName: 'Errors', Dimensions: [{ Name: 'FunctionName', Value: dev.ref(dev.functions['forget-worker']) }] },
      Period: 300,
      Stat: 'Sum',
    });
    dev.template.hasResourceProperties('AWS::Logs::MetricFilter', {
      LogGroupName: dev.ref(dev.forgetWorkerLogGroup),
      FilterPattern: '{ ($.level = "ERROR") && ($.message = "forget job failed") }',
      MetricTransformations: [{ MetricNamespace: 'AgentMemory', MetricName: 'ForgetJobFailures', MetricValue: '1' }],
    });
  });

  test('the forget worker logs, at error level, the message the ForgetJobFailures filter counts', async () => {
    const errors: unknown[][] = [];
    const logger = new Logger({ logLevel: 'SILENT' });
    logger.error = ((...args: unknown[]) => void errors.push(args)) as typeof logger.error;
    const failed: string[] = [];
    const worker = createForgetWorker({
      records: {
        runForgetJob: async () => Promise.reject(new Error('DynamoDB unreachable')),
        failForgetJob: async (_tenant: string, jobId: string) => void failed.push(jobId),
      },
      logger,
      maxReceives: 3,
    });
    const event = {
      Records: [{ messageId: 'm-1', body: JSON.stringify({ tenant_id: 't-1', job_id: 'j-1' }), attributes: { ApproximateReceiveCount: '3' } }],
    } as unknown as SQSEvent;
    const result = await worker(event, lambdaContext('forget-worker'));
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-1' }] });
    expect(errors.map((e) => e[0])).toEqual([FORGET_JOB_FAILED_MESSAGE]);
    // Its last delivery: the job is marked failed before the message goes to the DLQ.
    expect(failed).toEqual(['j-1']);
  });

  test('memory-dev-indexer-iterator-age: the indexer\'s IteratorAge maximum above 60 s for 5 minutes in a row', () => {
    expect(alarms.get('memory-dev-indexer-iterator-age')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'IteratorAge',
      Dimensions: [{ Name: 'FunctionName', Value: dev.ref(dev.functions.indexer) }],
      Statistic: 'Maximum',
      Period: 60,
      Threshold: 60_000,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 5,
      DatapointsToAlarm: 5,
      TreatMissingData: 'notBreaching',
    });
  });

  test('memory-dev-api-5xx-rate: 5XX other than the record quota\'s 507, above 1 % of requests in 2 of 3 five-minute periods', () => {
    const alarm = alarms.get('memory-dev-api-5xx-rate')!;
    expect(alarm).toMatchObject({
      Threshold: 0.01,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
      TreatMissingData: 'notBreaching',
    });
    const stageRef = dev.ref(dev.api.deploymentStage);
    const stage = [
      { Name: 'ApiName', Value: 'memory-service-dev' },
      { Name: 'Stage', Value: stageRef },
    ];
    const queries = alarm.Metrics as CfnJson[];
    expect(queries.filter((q) => q.ReturnData === true)).toEqual([
      expect.objectContaining({ Expression: '(errors - FILL(quota, 0)) / requests' }),
    ]);
    const stat = (id: string) => queries.find((q) => q.Id === id)!.MetricStat;
    expect(stat('errors')).toEqual({ Metric: { Namespace: 'AWS/ApiGateway', MetricName: '5XXError', Dimensions: stage }, Period: 300, Stat: 'Sum' });
    expect(stat('requests')).toEqual({ Metric: { Namespace: 'AWS/ApiGateway', MetricName: 'Count', Dimensions: stage }, Period: 300, Stat: 'Sum' });
    // The service-wide count the record handler publishes without the tenant dimension.
    expect(stat('quota')).toEqual({
      Metric: { Namespace: 'AgentMemory', MetricName: 'RecordQuotaRejections', Dimensions: [{ Name: 'service', Value: 'memory' }] },
      Period: 300,
      Stat: 'Sum',
    });
  });

  test('memory-dev-authorizer-failures: any authorizer failure (not a refused key), counted from its log', () => {
    expect(alarms.get('memory-dev-authorizer-failures')).toMatchObject({
      Namespace: 'AgentMemory',
      MetricName: 'AuthorizerFailures',
      Statistic: 'Sum',
      Period: 300,
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
    dev.template.hasResourceProperties('AWS::Logs::MetricFilter', {
      FilterPattern: '{ ($.level = "ERROR") && ($.message = "authorizer failed") }',
      MetricTransformations: [{ MetricNamespace: 'AgentMemory', MetricName: 'AuthorizerFailures', MetricValue: '1' }],
    });
  });

  test('memory-dev-lambda-throttles: the sum of every function\'s throttles over 5 minutes above 0, the health check\'s aside', () => {
    // An alarm's math takes 10 metrics at most; the health check's throttles fail its own monitor.
    const watched = SERVICE_FUNCTIONS.filter((name) => name !== 'health');
    const alarm = alarms.get('memory-dev-lambda-throttles')!;
    expect(alarm).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 1, TreatMissingData: 'notBreaching' });
    const queries = alarm.Metrics as CfnJson[];
    const returned = queries.filter((q) => q.ReturnData === true);
    expect(returned).toHaveLength(1);
    // A metric id is a lowercase letter then letters, digits and underscores: forget-worker is forget_worker.
    expect(returned[0]!.Expression).toBe(watched.map((name) => `FILL(${metricId(name)}, 0)`).join(' + '));
    expect(queries).toHaveLength(watched.length + 1);
    for (const query of queries) expect(query.Id).toMatch(/^[a-z][A-Za-z0-9_]*$/);
    for (const name of watched) {
      expect(queries).toContainEqual({
        Id: metricId(name),
        ReturnData: false,
        MetricStat: {
          Metric: { Namespace: 'AWS/Lambda', MetricName: 'Throttles', Dimensions: [{ Name: 'FunctionName', Value: dev.ref(dev.functions[name]) }] },
          Period: 300,
          Stat: 'Sum',
        },
      });
    }
  });

  test('neither API 4XX nor the authorizer\'s Errors (every refused key is one) are alarmed; the forget worker\'s are', () => {
    const watched = [...alarms.values()].flatMap((a) => [
      { MetricName: a.MetricName as string | undefined, Dimensions: a.Dimensions as unknown },
      ...((a.Metrics ?? []) as CfnJson[]).map((q) => ({ MetricName: q.MetricStat?.Metric?.MetricName as string | undefined, Dimensions: q.MetricStat?.Metric?.Dimensions as unknown })),
    ]);
    expect(watched.map((m) => m.MetricName)).not.toContain('4XXError');
    expect(watched.filter((m) => m.MetricName === 'Errors').map((m) => m.Dimensions)).toEqual([
      [{ Name: 'FunctionName', Value: dev.ref(dev.functions['forget-worker']) }],
    ]);
  });

  test('a prod stack names its alarms and dashboard memory-prod-…', () => {
    const prod = synth('prod');
    expect([...alarmsByName(prod.template).keys()].every((name) => name.startsWith('memory-prod-'))).toBe(true);
    prod.template.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'memory-prod' });
  });
});

describe('Observability: the dashboard', () => {
  const { raw, widgets } = dashboardBody(dev.template);
  const byTitle = (title: string) => {
    const widget = widgets.find((w) => w.properties?.title === title);
    if (!widget) throw new Error(`no widget titled "${title}" in ${widgets.map((w) => w.properties?.title).join(' | ')}`);
    return widget;
  };
  const searchFor = (metricName: string) =>
    `SEARCH('{AgentMemory,service,tenant} service="memory" MetricName="${metricName}"', 'Sum')`;
  const insightsFor = (metricName: string) =>
    `SELECT SUM(${metricName}) FROM SCHEMA("AgentMemory", service, tenant) WHERE service = 'memory' GROUP BY tenant ORDER BY SUM() DESC LIMIT 50`;

  test('is named memory-dev and keeps each widget\'s own period', () => {
    dev.template.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'memory-dev' });
    expect(JSON.parse(raw).periodOverride).toBe('inherit');
  });

  test('shows service health: API requests, 4XX, 5XX and latency percentiles, and every function\'s errors, duration and throttles', () => {
    const api = JSON.stringify(byTitle('API requests and errors').properties.metrics);
    for (const metric of ['Count', '4XXError', '5XXError']) expect(api).toContain(`"${metric}"`);
    const latency = byTitle('API latency (ms)').properties.metrics as unknown[][];
    expect(latency.map((m) => (m.at(-1) as CfnJson).stat)).toEqual(['p50', 'p99', 'p99']);
    for (const [title, metricName] of [
      ["Lambda errors (the authorizer's include every refused key)", 'Errors'],
      ['Lambda duration p99 (ms)', 'Duration'],
      ['Lambda throttles', 'Throttles'],
    ] as const) {
      const metrics = byTitle(title).properties.metrics as unknown[][];
      expect(metrics.map((m) => m[1])).toEqual(SERVICE_FUNCTIONS.map(() => metricName));
      expect(metrics.map((m) => (m.at(-1) as CfnJson).label)).toEqual([...SERVICE_FUNCTIONS]);
    }
    const failureQueues = byTitle('Messages waiting in the failure queues').properties.metrics as unknown[][];
    expect(failureQueues.map((m) => m[1])).toEqual(['ApproximateNumberOfMessagesVisible', 'ApproximateNumberOfMessagesVisible', 'ApproximateNumberOfMessagesVisible']);
    expect(failureQueues.map((m) => (m.at(-1) as CfnJson).label)).toEqual(['Classification DLQ', 'Stream failures', 'Forget DLQ']);
    expect(byTitle('Indexer iterator age (ms, alarm above 60 s)').properties.annotations.alarms).toHaveLength(1);
    expect(byTitle('Alarms').properties.alarms).toHaveLength(7);
  });

  test.each([
    ['Records written by tenant', USAGE_METRIC.recordsWritten],
    ['Queries served by tenant', USAGE_METRIC.queriesServed],
    ['Bytes stored by tenant (bytes of the records written in the range)', USAGE_METRIC.bytesStored],
    ['Records deleted by tenant (a forget job counts when it starts)', USAGE_METRIC.recordsDeleted],
  ])('"%s" is a table of every tenant\'s sum of %s over the time range', (title, metricName) => {
    const { properties } = byTitle(title);
    expect(properties.view).toBe('table');
    expect(properties.table).toMatchObject({ showTimeSeriesData: false, summaryColumns: ['SUM'] });
    expect(properties.singleValueFullPrecision).toBe(true);
    expect(expressionsOf(byTitle(title))).toEqual([{ expression: searchFor(metricName), label: "${PROP('Dim.tenant')}" }]);
  });

  test('quota rejections by tenant list both rejections, each row named by tenant and metric', () => {
    const widget = byTitle('Quota rejections by tenant');
    expect(widget.properties.table).toMatchObject({ showTimeSeriesData: false, summaryColumns: ['SUM'] });
    expect(expressionsOf(widget)).toEqual([
      {
        expression: `SEARCH('{AgentMemory,service,tenant} service="memory" (MetricName="RecordQuotaRejections" OR MetricName="QueryQuotaRejections")', 'Sum')`,
        label: "${PROP('Dim.tenant')} ${PROP('MetricName')}",
      },
    ]);
  });

  test('each usage metric has a total over the whole time range, all tenants summed', () => {
    const totals = widgets.filter((w) => w.properties?.view === 'singleValue');
    expect(totals).toHaveLength(6);
    for (const widget of totals) expect(widget.properties).toMatchObject({ setPeriodToTimeRange: true, singleValueFullPrecision: true });
    expect(totals.flatMap(expressionsOf).map((e) => e.expression)).toEqual(
      [
        USAGE_METRIC.recordsWritten,
        USAGE_METRIC.bytesStored,
        USAGE_METRIC.queriesServed,
        USAGE_METRIC.recordsDeleted,
        USAGE_METRIC.recordQuotaRejections,
        USAGE_METRIC.queryQuotaRejections,
      ].map(
        (name) => `SUM(${searchFor(name)})`,
      ),
    );
  });

  test('each usage metric has a Metrics Insights trend of the top 50 tenants, grouped by tenant', () => {
    const trends = widgets.flatMap(expressionsOf).filter((e) => (e.expression as string).startsWith('SELECT'));
    expect(trends.map((e) => e.expression)).toEqual(
      [
        USAGE_METRIC.recordsWritten,
        USAGE_METRIC.queriesServed,
        USAGE_METRIC.bytesStored,
        USAGE_METRIC.recordQuotaRejections,
        USAGE_METRIC.queryQuotaRejections,
        USAGE_METRIC.recordsDeleted,
      ].map(insightsFor),
    );
    // No label: each series keeps its own, the tenant id of its group.
    for (const trend of trends) expect(trend.label).toBeUndefined();
  });

  test('the finance note says how to choose the month and what the numbers leave out', () => {
    const note = widgets.find((w) => w.type === 'text' && /finance/.test(w.properties.markdown as string))!.properties.markdown as string;
    expect(note).toMatch(/Absolute/);
    expect(note).toMatch(/UTC/);
    expect(note).toMatch(/last two weeks/);
    expect(note).toMatch(/admin usage --month YYYY-MM/);
  });

  test('widgets fit the 24-column grid', () => {
    for (const widget of widgets) expect(widget.x + widget.width).toBeLessThanOrEqual(24);
  });
});

describe('Observability: construction', () => {
  test('CDK has no warning or error about it', () => {
    const annotations = Annotations.fromStack(dev.stack);
    expect(annotations.findWarning('*', Match.anyValue())).toEqual([]);
    expect(annotations.findError('*', Match.anyValue())).toEqual([]);
  });

  test('cdk-nag AwsSolutions finds nothing to fix in it', () => {
    const report = new AwsSolutionsChecks().validateScope(dev.observability);
    expect(report.violations.map((v) => v.ruleName)).toEqual([]);
  });

  test('refuses a namespace that the dashboard queries could not quote', () => {
    const stack = new Stack(testApp(), 'Bad');
    const fn = new lambda.Function(stack, 'Fn', { code: lambda.Code.fromInline('x'), runtime: lambda.Runtime.NODEJS_22_X, handler: 'index.handler' });
    const api = new RestApi(stack, 'Api');
    api.root.addMethod('GET', new MockIntegration());
    const functions = Object.fromEntries(SERVICE_FUNCTIONS.map((name) => [name, fn])) as Record<ServiceFunctionName, lambda.Function>;
    const queue = new Queue(stack, 'Q');
    expect(
      () =>
        new Observability(stack, 'Observability', {
          stage: stageConfig('dev'),
          api,
          functions,
          classificationDlq: queue,
          streamFailures: queue,
          forgetDlq: queue,
          forgetWorkerLogGroup: new LogGroup(stack, 'ForgetWorkerLogs'),
          metricsNamespace: "Agent'Memory",
          serviceName: 'memory',
          authorizerLogGroup: new LogGroup(stack, 'AuthorizerLogs'),
        }),
    ).toThrow(/metricsNamespace/);
  });
});
