import { Dashboard, PeriodOverride } from 'aws-cdk-lib/aws-cloudwatch';
import type { Topic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { createAlarmTopic } from './observability-alarm-topic.js';
import { createAlarms } from './observability-alarms.js';
import { healthWidgets } from './observability-health.js';
import type { ObservabilityProps } from './observability-props.js';
import { usageWidgets } from './observability-usage.js';

export { metricId } from './observability-alarms.js';
export { AUTHORIZER_FAILURES_METRIC, FORGET_JOB_FAILED_MESSAGE, FORGET_JOB_FAILURES_METRIC } from './observability-log-metrics.js';
export type { ObservabilityProps } from './observability-props.js';

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
 *
 * Its parts: the topic (observability-alarm-topic.ts), the alarms (observability-alarms.ts) and the metric
 * filters they read (observability-log-metrics.ts), the dashboard's health rows (observability-health.ts)
 * and its usage rows with their queries (observability-usage.ts).
 */
export class Observability extends Construct {
  /** Every alarm notifies this topic, on ALARM and on OK. Subscribe the on-call to it. */
  readonly alarmTopic: Topic;
  /** `memory-<stage>`: service health on top, per-tenant usage for finance below. */
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const { stage, metricsNamespace: namespace, serviceName: service } = props;
    for (const [what, value] of Object.entries({ metricsNamespace: namespace, serviceName: service })) {
      // Both go into quoted strings of the dashboard's queries.
      if (!/^[A-Za-z0-9_./#:-]+$/.test(value)) throw new Error(`Observability: ${what} "${value}" has characters the metric queries cannot quote`);
    }
    const prefix = `memory-${stage.name}`;
    this.alarmTopic = createAlarmTopic(this, prefix, stage.removalPolicy);
    const alarms = createAlarms(this, prefix, this.alarmTopic, props);
    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: prefix,
      // Each widget's period is chosen with it (5 minutes for health, 1 day for the tables, 1 hour for the
      // trends); "auto" would shrink it for long ranges and push a month of 500 tenants over the data limits.
      periodOverride: PeriodOverride.INHERIT,
      widgets: [...healthWidgets(prefix, alarms, props), ...usageWidgets(namespace, service)],
    });
  }
}
