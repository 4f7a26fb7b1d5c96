import { FilterPattern, MetricFilter, type ILogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

/** The metric, counted from the authorizer's log, of authorizer runs that failed rather than refused a key. */
export const AUTHORIZER_FAILURES_METRIC = 'AuthorizerFailures';

/** The metric, counted from the forget worker's log, of forget job runs that failed (each delivery once). */
export const FORGET_JOB_FAILURES_METRIC = 'ForgetJobFailures';

/** What the forget worker logs, at level ERROR, when a run of a job fails (functions/forget-worker/handler.ts). */
export const FORGET_JOB_FAILED_MESSAGE = 'forget job failed';

/**
 * Counts, as a metric of `namespace`, the lines a function logs at error level with this exact message: a
 * metric filter on its log group.
 */
export function countErrorLines(scope: Construct, filterId: string, logGroup: ILogGroup, message: string, namespace: string, metricName: string): MetricFilter {
  return new MetricFilter(scope, filterId, {
    logGroup,
    filterPattern: FilterPattern.all(FilterPattern.stringValue('$.level', '=', 'ERROR'), FilterPattern.stringValue('$.message', '=', message)),
    metricNamespace: namespace,
    metricName,
    metricValue: '1',
  });
}
