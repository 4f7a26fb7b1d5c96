import { DeleteTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { dynamoDbClient } from '../../shared/adapters/aws/dynamodb/client.js';
import { ensureTables } from '../../shared/adapters/aws/dynamodb/ensure-tables.js';
import { TABLES, type TableNames, type TableRole } from '../../shared/adapters/aws/dynamodb/tables.js';

/** The endpoint of the DynamoDB Local that test/support/global-setup.js started, or undefined without Java. */
export const dynamoDbEndpoint: string | undefined = process.env.MEMORY_TEST_DYNAMODB_ENDPOINT;

/**
 * `describe` for suites that need DynamoDB Local. Without it (no Java on this machine) the suite is
 * skipped, and a skipped test names the reason, so the run says so instead of passing in silence.
 */
export function describeWithDynamoDb(name: string, fn: (endpoint: string) => void): void {
  const endpoint = dynamoDbEndpoint;
  if (endpoint === undefined) {
    const reason = process.env.MEMORY_TEST_DYNAMODB_UNAVAILABLE ?? 'DynamoDB Local was not started';
    describe(name, () => test.skip(`skipped: ${reason}`, () => undefined));
    return;
  }
  describe(name, () => fn(endpoint));
}

/** A fresh set of tables in DynamoDB Local, named uniquely, created as the CDK stack defines them. */
export interface TestTables {
  client: DynamoDBClient;
  names: TableNames;
  endpoint: string;
  /** Deletes the tables and closes the client. */
  drop(): Promise<void>;
}

export async function createTestTables(endpoint: string): Promise<TestTables> {
  const client = dynamoDbClient({ region: 'us-east-1', dynamodbEndpoint: endpoint });
  const prefix = `t${randomUUID().slice(0, 8)}`;
  const names = Object.fromEntries((Object.keys(TABLES) as TableRole[]).map((role) => [role, `${prefix}-${role}`])) as TableNames;
  await ensureTables(client, names);
  return {
    client,
    names,
    endpoint,
    drop: async () => {
      await Promise.all(Object.values(names).map((TableName) => client.send(new DeleteTableCommand({ TableName })).catch(() => undefined)));
      client.destroy();
    },
  };
}

/** The settings that put the local runtime's AWS-shaped mode (MEMORY_BACKEND=dynamodb) on these tables. */
export function awsShapedEnv(tables: TestTables): Record<string, string> {
  return {
    MEMORY_BACKEND: 'dynamodb',
    DYNAMODB_ENDPOINT: tables.endpoint,
    MEMORY_RECORDS_TABLE: tables.names.records,
    MEMORY_TENANTS_TABLE: tables.names.tenants,
    MEMORY_USAGE_TABLE: tables.names.usage,
    MEMORY_IDEMPOTENCY_TABLE: tables.names.idempotency,
  };
}
