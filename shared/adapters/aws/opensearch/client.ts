import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Client } from '@opensearch-project/opensearch';
import { AwsSigv4Signer, type AwsSigv4SignerOptions } from '@opensearch-project/opensearch/aws';

export interface OpenSearchClientConfig {
  /** The cluster's URL, such as `https://search-memory-abc123.eu-west-1.es.amazonaws.com`. */
  node: string;
  /**
   * Sign every request with SigV4 for an Amazon OpenSearch Service domain in this region, with the
   * default AWS credential chain unless `getCredentials` is given; `false` sends requests unsigned
   * (a self-hosted cluster, or a test server).
   */
  sigv4: { region: string; getCredentials?: AwsSigv4SignerOptions['getCredentials'] } | false;
}

/** An OpenSearch client for one cluster, signed for AWS or unsigned as configured. */
export function openSearchClient(config: OpenSearchClientConfig): Client {
  if (config.sigv4 === false) return new Client({ node: config.node });
  return new Client({
    ...AwsSigv4Signer({
      service: 'es',
      region: config.sigv4.region,
      getCredentials: config.sigv4.getCredentials ?? defaultProvider(),
    }),
    node: config.node,
  });
}
