import { Logger } from '@aws-lambda-powertools/logger';
import { loadAwsConfig, required } from '../../shared/adapters/aws/config.js';
import { documentClient, dynamoDbClient } from '../../shared/adapters/aws/dynamodb/client.js';
import { DynamoDbRecordStore } from '../../shared/adapters/aws/dynamodb/record-store.js';
import { cursorSealerFromSecret } from '../../shared/adapters/aws/secrets/cursor-key.js';
import { createReadHandler } from './handler.js';

const config = loadAwsConfig(process.env);

/**
 * The Lambda entry of `GET /api/v1/record` and `GET /api/v1/record/{id}`: strongly consistent reads of
 * DynamoDB, and listing cursors sealed with the key in the stack's Secrets Manager secret (read on the first
 * listing of each cold start).
 */
export const handler = createReadHandler({
  records: new DynamoDbRecordStore(documentClient(dynamoDbClient(config)), config.tables),
  cursors: cursorSealerFromSecret({ secretArn: required(config.cursorSecretArn, 'MEMORY_CURSOR_SECRET_ARN'), region: config.region }),
  logger: new Logger({ serviceName: config.serviceName }),
});
