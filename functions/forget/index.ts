import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { SQSClient } from '@aws-sdk/client-sqs';
import { loadAwsConfig, required } from '../../shared/adapters/aws/config.js';
import { documentClient, dynamoDbClient } from '../../shared/adapters/aws/dynamodb/client.js';
import { DynamoDbRecordStore } from '../../shared/adapters/aws/dynamodb/record-store.js';
import { SqsForgetSink } from '../../shared/adapters/aws/sqs/forget-sink.js';
import { createForgetHandler } from './handler.js';

const config = loadAwsConfig(process.env);
const forgetJobs = new SqsForgetSink(new SQSClient({ region: config.region }), required(config.forget.queueUrl, 'FORGET_QUEUE_URL'));

/** The Lambda entry of the deletes: `DELETE /api/v1/record/{id}`, `POST /api/v1/forget`, `GET /api/v1/forget/{job_id}`. */
export const handler = createForgetHandler({
  records: new DynamoDbRecordStore(documentClient(dynamoDbClient(config)), config.tables, Date.now, { jobs: forgetJobs }),
  logger: new Logger({ serviceName: config.serviceName }),
  metrics: new Metrics({ namespace: config.metricsNamespace, serviceName: config.serviceName }),
});
