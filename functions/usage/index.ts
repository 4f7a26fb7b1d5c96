import { Logger } from '@aws-lambda-powertools/logger';
import { loadAwsConfig } from '../../shared/adapters/aws/config.js';
import { documentClient, dynamoDbClient } from '../../shared/adapters/aws/dynamodb/client.js';
import { DynamoDbUsageMeter } from '../../shared/adapters/aws/dynamodb/usage-meter.js';
import { createUsageHandler } from './handler.js';

const config = loadAwsConfig(process.env);

/** The Lambda entry of `GET /api/v1/usage`: the tenant's monthly counters, read strongly consistent from DynamoDB. */
export const handler = createUsageHandler({
  usage: new DynamoDbUsageMeter(documentClient(dynamoDbClient(config)), config.tables.usage),
  logger: new Logger({ serviceName: config.serviceName }),
});
