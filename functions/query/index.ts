import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { loadAwsConfig, required } from '../../shared/adapters/aws/config.js';
import { documentClient, dynamoDbClient } from '../../shared/adapters/aws/dynamodb/client.js';
import { TableCheckedSearch } from '../../shared/adapters/aws/dynamodb/checked-search.js';
import { DynamoDbRecordStore } from '../../shared/adapters/aws/dynamodb/record-store.js';
import { DynamoDbUsageMeter } from '../../shared/adapters/aws/dynamodb/usage-meter.js';
import { openSearchClient } from '../../shared/adapters/aws/opensearch/client.js';
import { OpenSearchSearchIndex } from '../../shared/adapters/aws/opensearch/search-index.js';
import { createQueryHandler } from './handler.js';

const config = loadAwsConfig(process.env);
const search = openSearchClient({ node: required(config.opensearch.endpoint, 'OPENSEARCH_ENDPOINT'), sigv4: { region: config.region } });
const db = documentClient(dynamoDbClient(config));

/**
 * The Lambda entry of `GET /api/v1/query`: OpenSearch for the search, its hits checked against the records
 * table (so a deleted record never comes back while the index lags), DynamoDB for the query quota.
 */
export const handler = createQueryHandler({
  search: new TableCheckedSearch(
    new OpenSearchSearchIndex(search, config.opensearch.index, { timeoutMs: config.opensearch.searchTimeoutMs }),
    new DynamoDbRecordStore(db, config.tables),
  ),
  usage: new DynamoDbUsageMeter(db, config.tables.usage),
  logger: new Logger({ serviceName: config.serviceName }),
  metrics: new Metrics({ namespace: config.metricsNamespace, serviceName: config.serviceName }),
});
