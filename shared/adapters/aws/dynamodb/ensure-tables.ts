import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { createTableInput, TABLES, type TableNames, type TableRole } from './tables.js';

/**
 * Creates the tables that do not exist yet, as the CDK stack defines them, and waits until each is
 * active. For DynamoDB Local (tests and the AWS-shaped local mode); on AWS the stack owns the tables.
 * Returns the roles of the tables it created.
 */
export async function ensureTables(client: DynamoDBClient, names: TableNames): Promise<TableRole[]> {
  const created: TableRole[] = [];
  for (const role of Object.keys(TABLES) as TableRole[]) {
    const name = names[role];
    if (await tableExists(client, name)) continue;
    try {
      await client.send(new CreateTableCommand(createTableInput(role, name)));
      created.push(role);
    } catch (error) {
      if (!(error instanceof ResourceInUseException)) throw error;
    }
    await waitUntilTableExists({ client, maxWaitTime: 60, minDelay: 1, maxDelay: 2 }, { TableName: name });
    const ttl: string | undefined = (TABLES[role] as { timeToLiveAttribute?: string }).timeToLiveAttribute;
    if (ttl !== undefined) {
      await client.send(
        new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { Enabled: true, AttributeName: ttl } }),
      );
    }
  }
  return created;
}

/** The names of the tables that do not exist, in role order (empty when all do). */
export async function missingTables(client: DynamoDBClient, names: TableNames): Promise<string[]> {
  const missing: string[] = [];
  for (const role of Object.keys(TABLES) as TableRole[]) if (!(await tableExists(client, names[role]))) missing.push(names[role]);
  return missing;
}

async function tableExists(client: DynamoDBClient, name: string): Promise<boolean> {
  try {
    await client.send(new DescribeTableCommand({ TableName: name }));
    return true;
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return false;
    throw error;
  }
}
