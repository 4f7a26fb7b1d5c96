import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { ServiceFunctionName } from '../lambda-bundling.js';
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
