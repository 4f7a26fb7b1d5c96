import { Logger } from '@aws-lambda-powertools/logger';
import { loadAwsConfig } from '../../shared/adapters/aws/config.js';
import { documentClient, dynamoDbClient } from '../../shared/adapters/aws/dynamodb/client.js';
import { DynamoDbRecordStore } from '../../shared/adapters/aws/dynamodb/record-store.js';
import { createForgetWorker } from './handler.js';

const config = loadAwsConfig(process.env);

/** The Lambda entry of the forget worker on the forget queue: deletes a large forget's records from DynamoDB. */
export const handler = createForgetWorker({
  records: new DynamoDbRecordStore(documentClient(dynamoDbClient(config)), config.tables),
  logger: new Logger({ serviceName: config.serviceName }),
  maxReceives: config.forget.maxReceives,
});
