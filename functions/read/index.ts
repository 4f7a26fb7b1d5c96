import { Logger } from '@aws-lambda-powertools/logger';
import { loadAwsConfig } from '../../shared/adapters/aws/config.js';
import { documentClient, dynamoDbClient } from '../../shared/adapters/aws/dynamodb/client.js';
import { DynamoDbRecordStore } from '../../shared/adapters/aws/dynamodb/record-store.js';
import { createReadHandler } from './handler.js';

const config = loadAwsConfig(process.env);

/** The Lambda entry of `GET /api/v1/record` and `GET /api/v1/record/{id}`: strongly consistent reads of DynamoDB. */
export const handler = createReadHandler({
  records: new DynamoDbRecordStore(documentClient(dynamoDbClient(config)), config.tables),
  logger: new Logger({ serviceName: config.serviceName }),
});
