import type { Logger } from '@aws-lambda-powertools/logger';
import type { Client } from '@opensearch-project/opensearch';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { putRecordsIndexTemplate, RECORDS_TEMPLATE_VERSION } from '../../shared/adapters/aws/opensearch/mapping.js';

export interface SearchSetupDeps {
  client: Client;
  /** The alias the query and indexer functions use (OPENSEARCH_INDEX). */
  alias: string;
  logger: Logger;
}

/** What the custom resource provider framework expects back. */
export interface SetupResult {
  PhysicalResourceId: string;
  Data: { alias: string; index: string; templateVersion: number };
}

/**
 * The deploy-time custom resource: on Create and Update it puts the records index template for
 * `<alias>-*`, then creates the first index `<alias>-000001` with `<alias>` as its write alias unless the
 * alias exists already. It is idempotent, so CloudFormation may retry it. The template applies to indices
 * created after it, so a mapping change ships as a new template version plus a reindex into a new index
 * behind the same alias (docs/deploy.md). Delete leaves the data alone: the domain's removal policy decides.
 */
export function createSearchSetupHandler({ client, alias, logger }: SearchSetupDeps) {
  const physicalId = `${alias}-template`;
  const firstIndex = `${alias}-000001`;
  return async (event: CloudFormationCustomResourceEvent): Promise<SetupResult> => {
    if (event.RequestType !== 'Delete') {
      await putRecordsIndexTemplate(client, { name: alias, indexPattern: `${alias}-*` });
      const { body: exists } = await client.indices.existsAlias({ name: alias });
      if (!exists) {
        await client.indices.create({ index: firstIndex, body: { aliases: { [alias]: { is_write_index: true } } } });
      }
      logger.info('records index template in place', { alias, template_version: RECORDS_TEMPLATE_VERSION, created_index: !exists });
    }
    return { PhysicalResourceId: physicalId, Data: { alias, index: firstIndex, templateVersion: RECORDS_TEMPLATE_VERSION } };
  };
}
