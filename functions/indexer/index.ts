import { Logger } from '@aws-lambda-powertools/logger';
import { SQSClient } from '@aws-sdk/client-sqs';
import { loadAwsConfig, required } from '../../shared/adapters/aws/config.js';
import { recordFromImage } from '../../shared/adapters/aws/dynamodb/record-item.js';
import { openSearchClient } from '../../shared/adapters/aws/opensearch/client.js';
import { OpenSearchDocumentIndex } from '../../shared/adapters/aws/opensearch/document-index.js';
import { SqsJobSink } from '../../shared/adapters/aws/sqs/job-sink.js';
import { createIndexerHandler } from './handler.js';

const config = loadAwsConfig(process.env);
const search = openSearchClient({ node: required(config.opensearch.endpoint, 'OPENSEARCH_ENDPOINT'), sigv4: { region: config.region } });

/** The Lambda entry of the records stream: each change into OpenSearch, each new record and each new text onto the SQS queue. */
export const handler = createIndexerHandler({
  index: new OpenSearchDocumentIndex(search, config.opensearch.index),
  jobs: new SqsJobSink(new SQSClient({ region: config.region }), required(config.classificationQueueUrl, 'CLASSIFICATION_QUEUE_URL')),
  recordFromImage,
  logger: new Logger({ serviceName: config.serviceName }),
});
