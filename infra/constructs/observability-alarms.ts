import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, MathExpression, Metric, TreatMissingData, type AlarmProps } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { AUTHORIZER_FAILURE_MESSAGE } from '../../shared/http/auth-context.js';
import { USAGE_METRIC } from '../../shared/http/usage-metrics.js';
import { SERVICE_FUNCTIONS } from '../lambda-bundling.js';
import { AUTHORIZER_FAILURES_METRIC, countErrorLines, FORGET_JOB_FAILED_MESSAGE, FORGET_JOB_FAILURES_METRIC } from './observability-log-metrics.js';
import type { ObservabilityProps } from './observability-props.js';

/** A function's name as a metric id of a math expression: a lowercase letter, then letters, digits and `_`. */
export const metricId = (name: string): string => name.replaceAll('-', '_');

/** The alarms, for the dashboard: every one, and the two it draws as graphs. */
export interface ServiceAlarms {
  /** Every alarm, in the order the dashboard's status widget lists them. */
  all: Alarm[];
  serverErrorRate: Alarm;
  iteratorAge: Alarm;
}

/**
 * The service's alarms, `<prefix>-<name>`, each notifying `topic` on ALARM and on OK, with the metric
 * filters that count the failures only a log shows. Observability's comment says what is alarmed and why.
 */
export function createAlarms(scope: Construct, prefix: string, topic: ITopic, props: ObservabilityProps): ServiceAlarms {
  const { api, functions, metricsNamespace: namespace, serviceName: service } = props;
  const notify = new SnsAction(topic);
  const alarm = (alarmId: string, name: string, alarmProps: Omit<AlarmProps, 'alarmName'>): Alarm => {
    const created = new Alarm(scope, alarmId, { ...alarmProps, alarmName: `${prefix}-${name}` });
    created.addAlarmAction(notify);
    // The OK notice tells the on-call the problem is gone, without opening the console.
    created.addOkAction(notify);
    return created;
  };

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
  countErrorLines(scope, 'ForgetJobFailuresFilter', props.forgetWorkerLogGroup, FORGET_JOB_FAILED_MESSAGE, namespace, FORGET_JOB_FAILURES_METRIC);
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
  countErrorLines(scope, 'AuthorizerFailuresFilter', props.authorizerLogGroup, AUTHORIZER_FAILURE_MESSAGE, namespace, AUTHORIZER_FAILURES_METRIC);
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
  // An alarm's math takes at most 10 metrics: the health check is left out, since a throttled health check
  // fails its own monitor, and it shares the account's concurrency with the functions that are watched.
  const watched = SERVICE_FUNCTIONS.filter((name) => name !== 'health');
  const throttleMetrics = Object.fromEntries(
    watched.map((name) => [metricId(name), functions[name].metricThrottles({ statistic: 'Sum', period: Duration.minutes(5) })]),
  );
  const throttlesAlarm = alarm('LambdaThrottlesAlarm', 'lambda-throttles', {
    alarmDescription:
      'A Lambda function of the service was throttled in the last 5 minutes. Find which one on the dashboard (Lambda ' +
      'throttles). Usually the account concurrency quota of the region is used up, by this service or another ' +
      'one in the account: check ConcurrentExecutions, and ask for a higher quota (Service Quotas, Lambda, Concurrent ' +
      'executions) if the load is real. Throttled API calls fail for clients; the stream and the queue retry.',
    metric: new MathExpression({
      expression: watched.map((name) => `FILL(${metricId(name)}, 0)`).join(' + '),
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
  return { all: alarms, serverErrorRate: serverErrorRateAlarm, iteratorAge: iteratorAgeAlarm };
}
