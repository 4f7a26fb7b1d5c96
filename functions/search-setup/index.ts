import { Logger } from '@aws-lambda-powertools/logger';
import { loadAwsConfig, required } from '../../shared/adapters/aws/config.js';
import { openSearchClient } from '../../shared/adapters/aws/opensearch/client.js';
import { createSearchSetupHandler } from './handler.js';

const config = loadAwsConfig(process.env);

/** The Lambda entry of the deploy-time custom resource that puts the index template and the first index. */
export const handler = createSearchSetupHandler({
  client: openSearchClient({ node: required(config.opensearch.endpoint, 'OPENSEARCH_ENDPOINT'), sigv4: { region: config.region } }),
  alias: config.opensearch.index,
  logger: new Logger({ serviceName: config.serviceName }),
});
