import { z } from 'zod';
import type { TableNames } from './dynamodb/tables.js';

/**
 * The settings of the AWS adapters, read from the environment once by each composition root (the Lambda
 * entries, the local server in `MEMORY_BACKEND=dynamodb` mode, the admin CLI). The CDK stack sets them
 * on every function; the defaults suit DynamoDB Local.
 */
export const awsEnvSchema = z.object({
  AWS_REGION: z.string().min(1).default('us-east-1'),
  /** Only for DynamoDB Local; on AWS the SDK finds the regional endpoint. */
  DYNAMODB_ENDPOINT: z.url().optional(),
  MEMORY_RECORDS_TABLE: z.string().min(3).default('memory-records'),
  MEMORY_TENANTS_TABLE: z.string().min(3).default('memory-tenants'),
  MEMORY_USAGE_TABLE: z.string().min(3).default('memory-usage'),
  MEMORY_IDEMPOTENCY_TABLE: z.string().min(3).default('memory-idempotency'),
});

export interface AwsConfig {
  region: string;
  dynamodbEndpoint: string | undefined;
  tables: TableNames;
}

/** Reads and validates the AWS settings; throws with every problem listed. */
export function loadAwsConfig(env: NodeJS.ProcessEnv): AwsConfig {
  const parsed = awsEnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`invalid configuration: ${problems}`);
  }
  const c = parsed.data;
  return {
    region: c.AWS_REGION,
    dynamodbEndpoint: c.DYNAMODB_ENDPOINT,
    tables: {
      records: c.MEMORY_RECORDS_TABLE,
      tenants: c.MEMORY_TENANTS_TABLE,
      usage: c.MEMORY_USAGE_TABLE,
      idempotency: c.MEMORY_IDEMPOTENCY_TABLE,
    },
  };
}
