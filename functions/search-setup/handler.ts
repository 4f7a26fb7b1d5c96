import type { Logger } from '@aws-lambda-powertools/logger';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';

export interface SearchSetupDeps {
  /**
   * Puts the records index template for `<alias>-*`, then creates `firstIndex` with the alias as its write
   * alias unless the alias exists already, when it adds the template's new fields to the indices behind it
   * instead; true when it created the index. Idempotent.
   */
  ensureIndex: (firstIndex: string) => Promise<boolean>;
  /** The version of the template ensureIndex puts. */
  templateVersion: number;
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
 * alias exists already (then ensureIndex adds the fields a new template version adds to the indices behind
 * it). It is idempotent, so CloudFormation may retry it. The template applies to indices created after it,
 * so a change to an existing field ships as a new template version plus a reindex into a new index behind
 * the same alias (docs/deploy.md). Delete leaves the data alone: the domain's removal policy decides.
 */
export function createSearchSetupHandler({ ensureIndex, templateVersion, alias, logger }: SearchSetupDeps) {
  const physicalId = `${alias}-template`;
  const firstIndex = `${alias}-000001`;
  return async (event: CloudFormationCustomResourceEvent): Promise<SetupResult> => {
    if (event.RequestType !== 'Delete') {
      const created = await ensureIndex(firstIndex);
      logger.info('records index template in place', { alias, template_version: templateVersion, created_index: created });
    }
    return { PhysicalResourceId: physicalId, Data: { alias, index: firstIndex, templateVersion } };
  };
}
