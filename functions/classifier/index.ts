import { Logger } from '@aws-lambda-powertools/logger';
import { BedrockClassifier, bedrockRuntimeClient } from '../../shared/adapters/aws/bedrock/classifier.js';
import { loadAwsConfig } from '../../shared/adapters/aws/config.js';
import { documentClient, dynamoDbClient } from '../../shared/adapters/aws/dynamodb/client.js';
import { DynamoDbRecordStore } from '../../shared/adapters/aws/dynamodb/record-store.js';
import { defaultClassifier } from '../../shared/classifiers/default.js';
import type { Classifier } from '../../shared/ports.js';
import { createClassifierWorker } from './handler.js';

const config = loadAwsConfig(process.env);
const logger = new Logger({ serviceName: config.serviceName });

// Bedrock only here, on the asynchronous path, and only when the stack is deployed with a model
// (docs/deploy.md); the linear model answers whenever Bedrock does not.
const classifier: Classifier = config.bedrock
  ? new BedrockClassifier({ ...config.bedrock, client: bedrockRuntimeClient(config.region), fallback: defaultClassifier, logger })
  : defaultClassifier;

const records = new DynamoDbRecordStore(documentClient(dynamoDbClient(config)), config.tables);

/**
 * The Lambda entry of the classification worker on the SQS queue: suggestions written back to DynamoDB. It
 * reads a record as stored (one GetItem), not as the API's reads see it, which would also query the tenant's
 * forget jobs: work a classification does not need, and a permission the worker does not have.
 */
export const handler = createClassifierWorker({
  records: {
    get: (tenantId, id) => records.stored(tenantId, id),
    setClassification: (tenantId, id, c, version) => records.setClassification(tenantId, id, c, version),
  },
  classifier,
  logger,
});
