import { Duration, Stack } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  AlarmStatusWidget,
  AlarmWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  PeriodOverride,
  SingleValueWidget,
  TableLayout,
  TableSummaryColumn,
  TableWidget,
  TextWidget,
  TreatMissingData,
  type AlarmProps,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { FilterPattern, MetricFilter, type ILogGroup } from 'aws-cdk-lib/aws-logs';
import { AUTHORIZER_FAILURE_MESSAGE } from '../../shared/http/auth-context.js';
import { Construct } from 'constructs';
import { TENANT_DIMENSION, USAGE_METRIC } from '../../shared/http/usage-metrics.js';
import { SERVICE_FUNCTIONS, type ServiceFunctionName } from '../lambda-bundling.js';
import type { StageConfig } from '../stage.js';

/** What the alarms and the dashboard watch. */
export interface ObservabilityProps {
  stage: StageConfig;
  /** The API; its metrics are read on `api.deploymentStage`. */
  api: RestApi;
  functions: Record<ServiceFunctionName, IFunction>;
  /** The classification queue's dead-letter queue. */
  classificationDlq: IQueue;
  /** The on-failure destination of the records stream's event source mapping. */
  streamFailures: IQueue;
  /** The forget queue's dead-letter queue: forget jobs that failed on every delivery. */
  forgetDlq: IQueue;
  /** The forget worker's log group, where its failed runs are counted. */
  forgetWorkerLogGroup: ILogGroup;
  /** `POWERTOOLS_METRICS_NAMESPACE` of the functions (`AgentMemory`). */
  metricsNamespace: string;
  /** `POWERTOOLS_SERVICE_NAME` of the functions (`memory`). */
  serviceName: string;
  /** The authorizer's log group, where its real failures are counted. */
  authorizerLogGroup: ILogGroup;
}

/** The metric, counted from the authorizer's log, of authorizer runs that failed rather than refused a key. */
export const AUTHORIZER_FAILURES_METRIC = 'AuthorizerFailures';

/** The metric, counted from the forget worker's log, of forget job runs that failed (each delivery once). */
export const FORGET_JOB_FAILURES_METRIC = 'ForgetJobFailures';

/** What the forget worker logs, at level ERROR, when a run of a job fails (functions/forget-worker/handler.ts). */
export const FORGET_JOB_FAILED_MESSAGE = 'forget job failed';

/** A function's name as a metric id of a math expression: a lowercase letter, then letters, digits and `_`. */
export const metricId = (name: string): string => name.replaceAll('-', '_');

/** Powertools Metrics puts the service name in this dimension of every metric it emits. */
const SERVICE_DIMENSION = 'service';

/**
 * How many tenants a Metrics Insights graph draws: the top 50 by their sum over the time range. More lines
 * than that cannot be told apart; the tables list them all (up to 500).
 */
const INSIGHTS_TOP = 50;

/**
 * The alarms, the SNS topic they notify and the `memory-<stage>` dashboard.
 *
 * What is alarmed, and what is not on purpose:
 * - Each way a record can fail to become searchable or classified: the classification DLQ, the stream's
 *   on-failure queue, and the indexer falling behind the stream (which keeps changes 24 hours only).
 * - Each way an erasure can fail to finish: a forget job in the forget DLQ, and any failed run of the
 *   forget worker (an error it caught and reported, a timeout or a crash).
 * - The API's 5XX rate, and Lambda throttles on any function.
 * - Not API 4XX: they are clients' mistakes.
 * - Not the authorizer's Lambda `Errors`: it throws `Unauthorized` for every unknown or revoked key (that
 *   is how a REQUEST authorizer answers 401), so that metric counts clients' mistakes too and would page on
 *   every bad key. Its real failures are counted from its log instead (`AuthorizerFailures`). An
 *   authorizer that really fails also makes API Gateway answer 500 on every route, which the
 *   5XX-rate alarm catches; a throttled one is in the throttles alarm.
 */
export class Observability extends Construct {
  /** Every alarm notifies this topic, on ALARM and on OK. Subscribe the on-call to it. */
  readonly alarmTopic: Topic;
  /** `memory-<stage>`: service health on top, per-tenant usage for finance below. */
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const { stage, api, functions, metricsNamespace: namespace, serviceName: service } = props;
    for (const [what, value] of Object.entries({ metricsNamespace: namespace, serviceName: service })) {
      // Both go into quoted strings of the dashboard's queries.
      if (!/^[A-Za-z0-9_./#:-]+$/.test(value)) throw new Error(`Observability: ${what} "${value}" has characters the metric queries cannot quote`);
    }
    const prefix = `memory-${stage.name}`;
    const { account, region, partition } = Stack.of(this);

    // CloudWatch cannot publish to a topic encrypted with the AWS managed key alias/aws/sns: that key's
    // policy cannot be changed to let cloudwatch.amazonaws.com use it, and the notifications would be
    // dropped with only a line in the alarm history. So the topic has its own key, which allows it. The key
    // statement has no condition, as in the SNS guide: a missing context key there would drop every
    // notification silently, and the topic policy below already limits publishing to this account's alarms.
    const key = new Key(this, 'AlarmTopicKey', {
      description: `Encrypts the ${prefix} alarm topic`,
      enableKeyRotation: true,
      removalPolicy: stage.removalPolicy,
    });
    key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchAlarmsPublishToEncryptedTopic',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
      }),
    );
    this.alarmTopic = new Topic(this, 'AlarmTopic', {
      topicName: `${prefix}-alarms`,
      displayName: `${prefix} alarms`,
      masterKey: key,
      enforceSSL: true,
    });
    // enforceSSL gives the topic a resource policy, which replaces SNS's default one: without this
    // statement the alarms of this account could no longer publish.
    this.alarmTopic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchAlarmsPublish',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.alarmTopic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': account },
          ArnLike: { 'aws:SourceArn': `arn:${partition}:cloudwatch:${region}:${account}:alarm:*` },
        },
      }),
    );
    const notify = new SnsAction(this.alarmTopic);
    const alarm = (alarmId: string, name: string, alarmProps: Omit<AlarmProps, 'alarmName'>): Alarm => {
      const created = new Alarm(this, alarmId, { ...alarmProps, alarmName: `${prefix}-${name}` });
      created.addAlarmAction(notify);
      // The OK notice tells the on-call the problem is gone, without opening the console.
      created.addOkAction(notify);
      return created;
    };
    /** Counts, as a metric of `namespace`, the lines a function logs at error level with this exact message. */
    const countErrorLines = (filterId: string, logGroup: ILogGroup, message: string, metricName: string) =>
      new MetricFilter(this, filterId, {
        logGroup,
        filterPattern: FilterPattern.all(FilterPattern.stringValue('$.level', '=', 'ERROR'), FilterPattern.stringValue('$.message', '=', message)),
        metricNamespace: namespace,
        metricName,
        metricValue: '1',
      });

    // --- Alarms ---------------------------------------------------------------------------------------

    // A message in either queue is a record that is already wrong (no suggestion, or not searchable), and it
    // stays there until someone acts: one message is enough, and the alarm stays in ALARM until the queue
    // is emptied. An idle empty queue publishes no metrics, which is fine (not breaching).
    const classificationDlqAlarm = alarm('ClassificationDlqAlarm', 'classification-dlq', {
      alarmDescription:
        'A classification job failed on every receive and is in the classification DLQ: its record has no type suggestion. ' +
        "Read the message (record id and tenant), find the failure in the classifier's logs, fix the cause, then redrive " +
        'the DLQ to the classification queue (SQS console, Start DLQ redrive) before its retention period ends. ' +
        'A redrive is safe: the classifier only writes the suggestion, and not on a deleted record.',
      metric: props.classificationDlq.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: Duration.minutes(1) }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const streamFailuresAlarm = alarm('StreamFailuresAlarm', 'stream-failures', {
      alarmDescription:
        "Records of the records table's stream still failed in the indexer after the event source mapping's retries: " +
        'they are missing from search (or still in it, for a delete) and were not queued for classification. ' +
        'Each message names the shard and sequence numbers, not the records. Find the cause in the indexer logs ' +
        '(OpenSearch unavailable or refusing a document, a record it cannot decode), fix it, then re-index those ' +
        'records: the stream keeps them only 24 hours after the write, later they must be re-read from the table.',
      metric: props.streamFailures.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: Duration.minutes(1) }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    // A forget job in the DLQ is an erasure a tenant asked for that did not finish: one message is enough.
    const forgetDlqAlarm = alarm('ForgetDlqAlarm', 'forget-dlq', {
      alarmDescription:
        'A forget job failed on every delivery and is in the forget DLQ: the erasure a tenant asked for is incomplete, ' +
        'and the records it matched but did not delete are visible again once the job says failed. The message names ' +
        "the tenant and the job; the forget worker's logs say why (\"forget job failed\"). Fix the cause, then: if the job item (tenants table, " +
        'pk tenant#<tenant>, sk forget#<job>) still says running (the worker was cut off on its last delivery), redrive ' +
        'the DLQ to the forget queue and the worker carries on; if it says failed, a redrive does nothing: send the same ' +
        'forget again (the item keeps its selectors) and delete the message.',
      metric: props.forgetDlq.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: Duration.minutes(1) }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    // The worker reports a failed job as a batch item failure, which Lambda does not count in Errors, and logs
    // it: that log line is counted. Errors still counts a run that timed out or crashed. Jobs are rare and
    // each failure delays an erasure by the queue's 90-minute visibility, so any one is worth a look.
    countErrorLines('ForgetJobFailuresFilter', props.forgetWorkerLogGroup, FORGET_JOB_FAILED_MESSAGE, FORGET_JOB_FAILURES_METRIC);
    const fiveMinuteSum = { statistic: 'Sum', period: Duration.minutes(5) } as const;
    const forgetWorkerErrorsAlarm = alarm('ForgetWorkerErrorsAlarm', 'forget-worker-errors', {
      alarmDescription:
        'A run of the forget worker failed in the last 5 minutes: a job it reported failed, or a run that timed out ' +
        "(15 minutes) or crashed. SQS delivers the job again after 90 minutes, up to 3 times, then it goes to the forget DLQ. " +
        "Search the forget worker's logs for \"forget job failed\" (the tenant, the job and the error), or for the " +
        'timeout. Usually DynamoDB throttled or was unreachable, or a deploy broke the worker.',
      metric: new MathExpression({
        expression: 'FILL(failures, 0) + FILL(errors, 0)',
        usingMetrics: {
          failures: new Metric({ namespace, metricName: FORGET_JOB_FAILURES_METRIC, ...fiveMinuteSum }),
          errors: functions['forget-worker'].metricErrors(fiveMinuteSum),
        },
        period: Duration.minutes(5),
        label: 'Forget worker failures',
      }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    // A record is searchable within one to two seconds normally (docs/architecture.md). A failing batch that
    // is bisected and retried can hold a shard for tens of seconds, so one minute of lag alone is not news;
    // five minutes in a row above it means the indexer is stuck or cannot keep up, hours before the 24-hour
    // stream retention would lose changes. No writes means no invocations and no data: not breaching.
    const iteratorAgeAlarm = alarm('IndexerIteratorAgeAlarm', 'indexer-iterator-age', {
      alarmDescription:
        "The indexer has been more than 60 s behind the records table's stream for 5 minutes: new records, edits and " +
        "deletes are not in search yet. Look at the indexer's errors, duration and throttles on the dashboard, its logs, " +
        'and the OpenSearch domain (health, CPU, write rejections). The stream keeps changes for 24 hours; ' +
        'a change older than that is lost to the index and needs a re-index from the table.',
      metric: functions.indexer.metric('IteratorAge', { statistic: 'Maximum', period: Duration.minutes(1) }),
      threshold: 60_000,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 5,
      datapointsToAlarm: 5,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    // The share of requests that answered 5XX for a reason other than the record quota. The API answers
    // 507 for a used-up record quota and API Gateway counts it as a 5XX, so the service-wide count of those
    // rejections (published without the tenant dimension for exactly this) is taken off. 1 % is an error
    // budget one can defend for a storage API; five-minute windows keep a single error at low traffic from
    // being 100 % of a one-minute window, and 2 of 3 windows let one blip pass while a real outage pages
    // within 10 minutes. No requests is not an outage.
    const stageMetrics = api.deploymentStage;
    const fiveMinutes = { statistic: 'Sum', period: Duration.minutes(5) } as const;
    const serverErrorRate = new MathExpression({
      expression: '(errors - FILL(quota, 0)) / requests',
      usingMetrics: {
        errors: stageMetrics.metricServerError(fiveMinutes),
        quota: new Metric({ namespace, metricName: USAGE_METRIC.recordQuotaRejections, dimensionsMap: { service }, ...fiveMinutes }),
        requests: stageMetrics.metricCount(fiveMinutes),
      },
      label: '5XX rate (507 record quota excluded)',
      period: Duration.minutes(5),
    });
    // The authorizer's own failures (DynamoDB unreachable, a bug), counted from its log: Lambda's Errors
    // metric would also count every refused key. One failure is worth a look: each one is a caller with
    // a possibly good key turned away with a 500.
    countErrorLines('AuthorizerFailuresFilter', props.authorizerLogGroup, AUTHORIZER_FAILURE_MESSAGE, AUTHORIZER_FAILURES_METRIC);
    alarm('AuthorizerFailuresAlarm', 'authorizer-failures', {
      alarmDescription:
        'The authorizer failed (it did not merely refuse a key): callers got 500 instead of an answer. Its log says ' +
        'why (search for "authorizer failed"); usually the tenants table is unreachable or throttled, or a deploy broke it.',
      metric: new Metric({ namespace, metricName: AUTHORIZER_FAILURES_METRIC, statistic: 'Sum', period: Duration.minutes(5) }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const serverErrorRateAlarm = alarm('Api5xxRateAlarm', 'api-5xx-rate', {
      alarmDescription:
        "More than 1 % of the API's answers were 5XX (a 507 for a used-up record quota does not count) in 2 of the " +
        'last 3 five-minute periods. Look at the Lambda errors, throttles and durations on the dashboard and the ' +
        'failing function logs. An authorizer that fails (DynamoDB unreachable, a bug) makes every route answer 500. ' +
        'OpenSearch unavailable makes searches fail.',
      metric: serverErrorRate,
      threshold: 0.01,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    // The functions reserve no concurrency (constructs/functions.ts), so a throttle means the account's
    // regional concurrency is used up, or a function scaled faster than Lambda allows: API callers get errors
    // and the stream and the queue fall behind. Any throttle is worth knowing. FILL makes a function without
    // data count as 0 instead of dropping the sum for that period; no data at all (no traffic) is not breaching.
    const throttleMetrics = Object.fromEntries(
      SERVICE_FUNCTIONS.map((name) => [metricId(name), functions[name].metricThrottles({ statistic: 'Sum', period: Duration.minutes(5) })]),
    );
    const throttlesAlarm = alarm('LambdaThrottlesAlarm', 'lambda-throttles', {
      alarmDescription:
        'A Lambda function of the service was throttled in the last 5 minutes. Find which one on the dashboard (Lambda ' +
        'throttles). Usually the account concurrency quota of the region is used up, by this service or another ' +
        'one in the account: check ConcurrentExecutions, and ask for a higher quota (Service Quotas, Lambda, Concurrent ' +
        'executions) if the load is real. Throttled API calls fail for clients; the stream and the queue retry.',
      metric: new MathExpression({
        expression: SERVICE_FUNCTIONS.map((name) => `FILL(${metricId(name)}, 0)`).join(' + '),
        usingMetrics: throttleMetrics,
        period: Duration.minutes(5),
        label: 'Throttles, all functions',
      }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const alarms = [
      serverErrorRateAlarm,
      throttlesAlarm,
      iteratorAgeAlarm,
      classificationDlqAlarm,
      streamFailuresAlarm,
      forgetDlqAlarm,
      forgetWorkerErrorsAlarm,
    ];

    // --- Usage queries (finance) -----------------------------------------------------------------------

    // A SEARCH reads any time range CloudWatch keeps (15 months), so it gives the month totals. It finds only
    // metrics with data in the last two weeks, and returns at most 500 time series (tenants).
    const schema = /^[A-Za-z0-9_]+$/.test(namespace) ? namespace : `"${namespace}"`;
    const search = (...metricNames: string[]): string => {
      const names = metricNames.map((name) => `MetricName="${name}"`).join(' OR ');
      const term = metricNames.length > 1 ? `(${names})` : names;
      return `SEARCH('{${schema},${SERVICE_DIMENSION},${TENANT_DIMENSION}} ${SERVICE_DIMENSION}="${service}" ${term}', 'Sum')`;
    };
    // A Metrics Insights query sorts and cuts to the top tenants, but reads two weeks at most.
    const insights = (metricName: string): string =>
      `SELECT SUM(${metricName}) FROM SCHEMA("${namespace}", ${SERVICE_DIMENSION}, ${TENANT_DIMENSION}) ` +
      `WHERE ${SERVICE_DIMENSION} = '${service}' GROUP BY ${TENANT_DIMENSION} ORDER BY SUM() DESC LIMIT ${INSIGHTS_TOP}`;
    const byTenant = (...metricNames: string[]): MathExpression =>
      new MathExpression({
        expression: search(...metricNames),
        // The dynamic label applies to each series the search returns.
        label: metricNames.length > 1 ? `\${PROP('Dim.${TENANT_DIMENSION}')} \${PROP('MetricName')}` : `\${PROP('Dim.${TENANT_DIMENSION}')}`,
      });
    // All tenants together, summed over the whole time range: a single number.
    const totalWidget = (metricName: string, title: string, width: number): SingleValueWidget =>
      new SingleValueWidget({
        title,
        metrics: [new MathExpression({ expression: `SUM(${search(metricName)})`, label: `${title}, all tenants` })],
        setPeriodToTimeRange: true,
        fullPrecision: true,
        width,
        height: 3,
      });
    // One row per tenant, one column with its sum over the dashboard's time range. The sum does not depend
    // on the period; one day keeps a month at 31 points per tenant, far under GetMetricData's limits.
    const tenantTable = (title: string, ...metricNames: string[]): TableWidget =>
      new TableWidget({
        title,
        metrics: [byTenant(...metricNames)],
        period: Duration.days(1),
        layout: TableLayout.HORIZONTAL,
        summary: { columns: [TableSummaryColumn.SUM], hideNonSummaryColumns: true, sticky: true },
        fullPrecision: true,
        width: 12,
        height: 8,
      });
    const trend = (title: string, metricName: string, width: number): GraphWidget =>
      new GraphWidget({
        title,
        // An empty label keeps each series' own label, which for GROUP BY is the tenant id.
        left: [new MathExpression({ expression: insights(metricName), label: '', period: Duration.hours(1) })],
        period: Duration.hours(1),
        width,
        height: 6,
      });

    // --- Dashboard ---------------------------------------------------------------------------------------

    const perFunction = (metric: (fn: IFunction, name: ServiceFunctionName) => IMetric): IMetric[] =>
      SERVICE_FUNCTIONS.map((name) => metric(functions[name], name));
    const health = [
      [new TextWidget({ markdown: `# ${prefix}: service health`, width: 24, height: 1 })],
      [new AlarmStatusWidget({ title: 'Alarms', alarms, width: 24, height: 3 })],
      [
        new GraphWidget({
          title: 'API requests and errors',
          left: [
            stageMetrics.metricCount({ statistic: 'Sum', label: 'Requests' }),
            stageMetrics.metricClientError({ statistic: 'Sum', label: '4XX (clients, not alarmed)' }),
            stageMetrics.metricServerError({ statistic: 'Sum', label: '5XX (507 record quota included)' }),
          ],
          width: 8,
        }),
        new GraphWidget({
          title: 'API latency (ms)',
          left: [
            stageMetrics.metricLatency({ statistic: 'p50', label: 'Latency p50' }),
            stageMetrics.metricLatency({ statistic: 'p99', label: 'Latency p99' }),
            stageMetrics.metricIntegrationLatency({ statistic: 'p99', label: 'Integration latency p99' }),
          ],
          width: 8,
        }),
        new AlarmWidget({ title: 'API 5XX rate (alarm above 1 %)', alarm: serverErrorRateAlarm, width: 8 }),
      ],
      [
        new GraphWidget({
          title: "Lambda errors (the authorizer's include every refused key)",
          left: perFunction((fn, name) => fn.metricErrors({ statistic: 'Sum', label: name })),
          width: 8,
        }),
        new GraphWidget({
          title: 'Lambda duration p99 (ms)',
          left: perFunction((fn, name) => fn.metricDuration({ statistic: 'p99', label: name })),
          width: 8,
        }),
        new GraphWidget({
          title: 'Lambda throttles',
          left: perFunction((fn, name) => fn.metricThrottles({ statistic: 'Sum', label: name })),
          width: 8,
        }),
      ],
      [
        new AlarmWidget({ title: 'Indexer iterator age (ms, alarm above 60 s)', alarm: iteratorAgeAlarm, width: 12 }),
        new GraphWidget({
          title: 'Messages waiting in the failure queues',
          left: [
            props.classificationDlq.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', label: 'Classification DLQ' }),
            props.streamFailures.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', label: 'Stream failures' }),
            props.forgetDlq.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', label: 'Forget DLQ' }),
          ],
          width: 12,
        }),
      ],
    ];
    const usage = [
      [
        new TextWidget({
          markdown: [
            '# Usage by tenant (finance)',
            'Choose the month in the time range picker: **Custom → Absolute**, from the 1st 00:00 to the 1st of the next month 00:00, with the time zone set to **UTC** ' +
              '(quotas count per calendar month in UTC). The totals and tables sum over the chosen range. ' +
              `They list the tenants that had usage in the **last two weeks** and at most 500 of them; for billing, \`admin usage --month YYYY-MM\` is authoritative. ` +
              `The trend graphs below show the top ${INSIGHTS_TOP} tenants over at most the last two weeks. See docs/metrics.md.`,
          ].join('\n\n'),
          width: 24,
          height: 3,
        }),
      ],
      // One widget per total, each with one SEARCH, so that each is its own small request.
      [
        totalWidget(USAGE_METRIC.recordsWritten, 'Records written', 4),
        totalWidget(USAGE_METRIC.bytesStored, 'Bytes stored (new records)', 4),
        totalWidget(USAGE_METRIC.queriesServed, 'Queries served', 4),
        totalWidget(USAGE_METRIC.recordsDeleted, 'Records deleted', 4),
        totalWidget(USAGE_METRIC.recordQuotaRejections, 'Record quota rejections (507)', 4),
        totalWidget(USAGE_METRIC.queryQuotaRejections, 'Query quota rejections (429)', 4),
      ],
      [
        tenantTable('Records written by tenant', USAGE_METRIC.recordsWritten),
        tenantTable('Queries served by tenant', USAGE_METRIC.queriesServed),
      ],
      [
        tenantTable('Bytes stored by tenant (bytes of the records written in the range)', USAGE_METRIC.bytesStored),
        tenantTable('Quota rejections by tenant', USAGE_METRIC.recordQuotaRejections, USAGE_METRIC.queryQuotaRejections),
      ],
      [
        trend(`Records written, top ${INSIGHTS_TOP} tenants (last two weeks at most)`, USAGE_METRIC.recordsWritten, 8),
        trend(`Queries served, top ${INSIGHTS_TOP} tenants`, USAGE_METRIC.queriesServed, 8),
        trend(`Bytes stored, top ${INSIGHTS_TOP} tenants`, USAGE_METRIC.bytesStored, 8),
      ],
      [
        trend(`Record quota rejections (507), top ${INSIGHTS_TOP} tenants`, USAGE_METRIC.recordQuotaRejections, 12),
        trend(`Query quota rejections (429), top ${INSIGHTS_TOP} tenants`, USAGE_METRIC.queryQuotaRejections, 12),
      ],
      // Deletes free no quota; finance sees them beside the writes (a forget job counts what it matched).
      [
        tenantTable('Records deleted by tenant (a forget job counts when it starts)', USAGE_METRIC.recordsDeleted),
        trend(`Records deleted, top ${INSIGHTS_TOP} tenants`, USAGE_METRIC.recordsDeleted, 12),
      ],
    ];
    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: prefix,
      // Each widget's period is chosen above (5 minutes for health, 1 day for the tables, 1 hour for the
      // trends); "auto" would shrink it for long ranges and push a month of 500 tenants over the data limits.
      periodOverride: PeriodOverride.INHERIT,
      widgets: [...health, ...usage],
    });
  }
}
