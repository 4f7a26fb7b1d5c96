import { Logger } from '@aws-lambda-powertools/logger';
import { loadAwsConfig, required } from '../../shared/adapters/aws/config.js';
import { openSearchClient } from '../../shared/adapters/aws/opensearch/client.js';
import { ensureRecordsIndex, RECORDS_TEMPLATE_VERSION } from '../../shared/adapters/aws/opensearch/mapping.js';
import { createSearchSetupHandler } from './handler.js';

const config = loadAwsConfig(process.env);

const client = openSearchClient({ node: required(config.opensearch.endpoint, 'OPENSEARCH_ENDPOINT'), sigv4: { region: config.region } });

/** The Lambda entry of the deploy-time custom resource that puts the index template and the first index. */
export const handler = createSearchSetupHandler({
  ensureIndex: (firstIndex) => ensureRecordsIndex(client, config.opensearch.index, firstIndex),
  templateVersion: RECORDS_TEMPLATE_VERSION,
  alias: config.opensearch.index,
  logger: new Logger({ serviceName: config.serviceName }),
});
