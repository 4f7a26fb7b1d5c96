import { Logger } from '@aws-lambda-powertools/logger';
import { loadAwsConfig } from '../../shared/adapters/aws/config.js';
import { documentClient, dynamoDbClient } from '../../shared/adapters/aws/dynamodb/client.js';
import { DynamoDbKeyStore } from '../../shared/adapters/aws/dynamodb/key-store.js';
import { createAuthorizerHandler } from './handler.js';

const config = loadAwsConfig(process.env);

/** The Lambda entry of the REQUEST authorizer: key hashes looked up in DynamoDB. */
export const handler = createAuthorizerHandler({
  keys: new DynamoDbKeyStore(documentClient(dynamoDbClient(config)), config.tables.tenants),
  logger: new Logger({ serviceName: config.serviceName }),
});
