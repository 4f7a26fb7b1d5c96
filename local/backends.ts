import type { Logger } from '@aws-lambda-powertools/logger';
import type { AdminStores, Backend } from './backend.js';
import { openSqliteAdminStores, openSqliteBackend } from './backends-sqlite.js';
import type { LocalConfig } from './config.js';

export { NoDatabaseError, type AdminStores, type Backend } from './backend.js';

/** Opens the configured backend. The AWS-shaped one, and with it the AWS SDK, is loaded only when configured. */
export async function openBackend(config: LocalConfig, logger: Logger): Promise<Backend> {
  if (!config.aws) return openSqliteBackend(config, logger);
  const { openDynamoDbBackend } = await import('./backends-dynamodb.js');
  return openDynamoDbBackend(config, config.aws, logger);
}

/**
 * Opens the stores the admin CLI needs on the configured backend. Unless `create` is set, the data must
 * exist already: the SQLite file a server made, or the tables on DynamoDB Local. Otherwise it throws
 * NoDatabaseError and creates nothing, neither a file nor a directory nor a table. On AWS the stack owns
 * the tables and nothing is sent until a command runs (admin.ts reports a missing table then).
 */
export async function openAdminStores(config: LocalConfig, { create = false }: { create?: boolean } = {}): Promise<AdminStores> {
  if (config.aws) {
    const { openDynamoDbAdminStores } = await import('./backends-dynamodb.js');
    return openDynamoDbAdminStores(config.aws, { create });
  }
  return openSqliteAdminStores(config, { create });
}
