import { AlarmStatusWidget, AlarmWidget, GraphWidget, TextWidget, type IMetric, type IWidget } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { SERVICE_FUNCTIONS, type ServiceFunctionName } from '../lambda-bundling.js';
import type { ServiceAlarms } from './observability-alarms.js';
import type { ObservabilityProps } from './observability-props.js';

/**
 * The top of the dashboard, for the on-call: the alarms' states, the API's requests, errors and latency,
 * each function's errors, durations and throttles, the indexer's lag and the failure queues.
 */
export function healthWidgets(prefix: string, alarms: ServiceAlarms, props: ObservabilityProps): IWidget[][] {
  const { api, functions } = props;
  const stageMetrics = api.deploymentStage;
  const perFunction = (metric: (fn: IFunction, name: ServiceFunctionName) => IMetric): IMetric[] =>
    SERVICE_FUNCTIONS.map((name) => metric(functions[name], name));
  const health: IWidget[][] = [
    [new TextWidget({ markdown: `# ${prefix}: service health`, width: 24, height: 1 })],
    [new AlarmStatusWidget({ title: 'Alarms', alarms: alarms.all, width: 24, height: 3 })],
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
      new AlarmWidget({ title: 'API 5XX rate (alarm above 1 %)', alarm: alarms.serverErrorRate, width: 8 }),
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
      new AlarmWidget({ title: 'Indexer iterator age (ms, alarm above 60 s)', alarm: alarms.iteratorAge, width: 12 }),
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
  return health;
}
