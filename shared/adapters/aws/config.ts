import { z } from 'zod';
import { LIMITS } from '../../domain/record.js';
import { parseEnv } from '../../env.js';
import type { BedrockSettings } from './bedrock/classifier.js';
import type { TableNames } from './dynamodb/tables.js';
import type { GatewaySettings } from './gateway/usage-plans.js';

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
  /** The search domain's endpoint (`https://…`); the query and indexer Lambdas need it. */
  OPENSEARCH_ENDPOINT: z.url().optional(),
  /** The records index, or an alias with one write index. */
  OPENSEARCH_INDEX: z.string().min(1).default('memory-records'),
  /** How long the query Lambda waits for OpenSearch before it answers 503 search_timeout; inside its 10 s timeout. */
  MEMORY_SEARCH_TIMEOUT_MS: z.coerce.number().int().min(100).max(8_000).default(LIMITS.searchTimeoutMs),
  /** The classification queue; the indexer Lambda needs it. */
  CLASSIFICATION_QUEUE_URL: z.url().optional(),
  /** The forget jobs' queue; the forget Lambda sends to it. */
  FORGET_QUEUE_URL: z.url().optional(),
  /** The forget queue's maxReceiveCount: the forget worker marks a job failed on its last delivery. */
  FORGET_MAX_RECEIVES: z.coerce.number().int().min(1).max(1000).default(3),
  /**
   * The Secrets Manager secret (its ARN) whose value is the key that seals listing cursors; the read Lambda
   * needs it. The local runtime keeps its key in its SQLite file instead and ignores this.
   */
  MEMORY_CURSOR_SECRET_ARN: z.string().regex(/^arn:[\w-]+:secretsmanager:/, 'must be the ARN of a Secrets Manager secret').optional(),
  /**
   * The deployed REST API, its stage and its default usage plan, from the stack's outputs. The admin CLI
   * needs all three to register keys with API Gateway; set none of them locally.
   */
  MEMORY_API_ID: z.string().min(1).optional(),
  MEMORY_API_STAGE: z.string().min(1).optional(),
  MEMORY_DEFAULT_USAGE_PLAN_ID: z.string().min(1).optional(),
  /**
   * The classifier of the classification worker: the in-process linear model, or a model on Amazon Bedrock
   * with the linear model as its fallback. `POST /v1/classify` and the local runtime always use the linear model.
   */
  MEMORY_CLASSIFIER: z.enum(['linear', 'bedrock']).default('linear'),
  /** The Bedrock model or cross-region inference profile id; set with MEMORY_CLASSIFIER=bedrock, and only then. */
  BEDROCK_MODEL_ID: z.string().regex(/^\S+$/, 'a model id has no spaces').optional(),
  /** How long the worker waits for Bedrock per record; well inside the worker's 30 s Lambda timeout. */
  BEDROCK_TIMEOUT_MS: z.coerce.number().int().min(100).max(10_000).default(3_000),
  POWERTOOLS_SERVICE_NAME: z.string().min(1).default('memory'),
  POWERTOOLS_METRICS_NAMESPACE: z.string().min(1).default('AgentMemory'),
});

export interface AwsConfig {
  region: string;
  dynamodbEndpoint: string | undefined;
  tables: TableNames;
  opensearch: { endpoint: string | undefined; index: string; searchTimeoutMs: number };
  classificationQueueUrl: string | undefined;
  forget: { queueUrl: string | undefined; maxReceives: number };
  /** The secret that holds the listing cursors' key (the read Lambda's); undefined locally. */
  cursorSecretArn: string | undefined;
  /** The API Gateway side of key issuance; null unless all three MEMORY_API_* settings are given. */
  gateway: GatewaySettings | null;
  /** The classification worker's Bedrock model; null for the linear model (MEMORY_CLASSIFIER=linear). */
  bedrock: BedrockSettings | null;
  serviceName: string;
  metricsNamespace: string;
}

/** Reads and validates the AWS settings; throws with every problem listed. */
export function loadAwsConfig(env: NodeJS.ProcessEnv): AwsConfig {
  const c = parseEnv(awsEnvSchema, env);
  const { MEMORY_API_ID: apiId, MEMORY_API_STAGE: stage, MEMORY_DEFAULT_USAGE_PLAN_ID: defaultUsagePlanId } = c;
  const missing = Object.entries({ MEMORY_API_ID: apiId, MEMORY_API_STAGE: stage, MEMORY_DEFAULT_USAGE_PLAN_ID: defaultUsagePlanId })
    .filter(([, value]) => value === undefined)
    .map(([name]) => name);
  // Half a gateway configuration would issue keys that API Gateway refuses; say so instead of ignoring it.
  if (missing.length > 0 && missing.length < 3) {
    throw new Error(
      `invalid configuration: missing ${missing.join(', ')}; MEMORY_API_ID, MEMORY_API_STAGE and ` +
        'MEMORY_DEFAULT_USAGE_PLAN_ID are set together (the stack outputs them) or not at all',
    );
  }
  // A model id without the switch, or the switch without a model id, is a mistake either way: say so.
  if (c.MEMORY_CLASSIFIER === 'bedrock' && c.BEDROCK_MODEL_ID === undefined) {
    throw new Error('invalid configuration: MEMORY_CLASSIFIER=bedrock needs BEDROCK_MODEL_ID, the model or inference profile to call');
  }
  if (c.MEMORY_CLASSIFIER !== 'bedrock' && c.BEDROCK_MODEL_ID !== undefined) {
    throw new Error(
      `invalid configuration: BEDROCK_MODEL_ID is set but MEMORY_CLASSIFIER is ${c.MEMORY_CLASSIFIER}; ` +
        'set MEMORY_CLASSIFIER=bedrock to use the model, or unset BEDROCK_MODEL_ID',
    );
  }
  return {
    region: c.AWS_REGION,
    dynamodbEndpoint: c.DYNAMODB_ENDPOINT,
    tables: {
      records: c.MEMORY_RECORDS_TABLE,
      tenants: c.MEMORY_TENANTS_TABLE,
      usage: c.MEMORY_USAGE_TABLE,
      idempotency: c.MEMORY_IDEMPOTENCY_TABLE,
    },
    opensearch: { endpoint: c.OPENSEARCH_ENDPOINT, index: c.OPENSEARCH_INDEX, searchTimeoutMs: c.MEMORY_SEARCH_TIMEOUT_MS },
    classificationQueueUrl: c.CLASSIFICATION_QUEUE_URL,
    forget: { queueUrl: c.FORGET_QUEUE_URL, maxReceives: c.FORGET_MAX_RECEIVES },
    cursorSecretArn: c.MEMORY_CURSOR_SECRET_ARN,
    gateway: apiId && stage && defaultUsagePlanId ? { apiId, stage, defaultUsagePlanId } : null,
    bedrock: c.BEDROCK_MODEL_ID !== undefined ? { modelId: c.BEDROCK_MODEL_ID, timeoutMs: c.BEDROCK_TIMEOUT_MS } : null,
    serviceName: c.POWERTOOLS_SERVICE_NAME,
    metricsNamespace: c.POWERTOOLS_METRICS_NAMESPACE,
  };
}

/** A setting one Lambda cannot run without; throws at cold start, naming it, when it is missing. */
export function required<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new Error(`invalid configuration: ${name} is required by this function`);
  return value;
}
