import { Logger } from '@aws-lambda-powertools/logger';
import { loadAwsConfig } from '../../shared/adapters/aws/config.js';
import { documentClient, dynamoDbClient } from '../../shared/adapters/aws/dynamodb/client.js';
import { DynamoDbRecordStore } from '../../shared/adapters/aws/dynamodb/record-store.js';
import { createHealthHandler } from './handler.js';

const config = loadAwsConfig(process.env);

/** The Lambda entry of `GET /healthz`: one read of the records table, no key, no tenant's data. */
export const handler = createHealthHandler({
  records: new DynamoDbRecordStore(documentClient(dynamoDbClient(config)), config.tables),
  logger: new Logger({ serviceName: config.serviceName }),
});
