import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { loadAwsConfig } from '../../shared/adapters/aws/config.js';
import { documentClient, dynamoDbClient } from '../../shared/adapters/aws/dynamodb/client.js';
import { DynamoDbRecordStore } from '../../shared/adapters/aws/dynamodb/record-store.js';
import { createRecordHandler } from './handler.js';

const config = loadAwsConfig(process.env);

/** The Lambda entry of `POST /api/v1/record`: DynamoDB, wired once per cold start. */
export const handler = createRecordHandler({
  records: new DynamoDbRecordStore(documentClient(dynamoDbClient(config)), config.tables),
  logger: new Logger({ serviceName: config.serviceName }),
  metrics: new Metrics({ namespace: config.metricsNamespace, serviceName: config.serviceName }),
});
