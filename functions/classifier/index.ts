import { Logger } from '@aws-lambda-powertools/logger';
import { loadAwsConfig } from '../../shared/adapters/aws/config.js';
import { documentClient, dynamoDbClient } from '../../shared/adapters/aws/dynamodb/client.js';
import { DynamoDbRecordStore } from '../../shared/adapters/aws/dynamodb/record-store.js';
import { defaultClassifier } from '../../shared/classifiers/default.js';
import { createClassifierWorker } from './handler.js';

const config = loadAwsConfig(process.env);

/** The Lambda entry of the classification worker on the SQS queue: suggestions written back to DynamoDB. */
export const handler = createClassifierWorker({
  records: new DynamoDbRecordStore(documentClient(dynamoDbClient(config)), config.tables),
  classifier: defaultClassifier,
  logger: new Logger({ serviceName: config.serviceName }),
});
