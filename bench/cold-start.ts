/**
 * What each Lambda costs before and around its I/O: the bundle the stack deploys, the time a fresh `node`
 * takes to load it (the part of a cold start that is ours), and the warm handler's own compute per
 * invocation, with the ports replaced by the in-memory fakes of support/fakes.ts.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { marshall } from '@aws-sdk/util-dynamodb';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  AttributeValue,
  Context,
  DynamoDBBatchResponse,
  DynamoDBRecord,
  DynamoDBStreamEvent,
  SQSBatchResponse,
  SQSEvent,
  StreamRecord,
} from 'aws-lambda';
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { Console } from 'node:console';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createAuthorizerHandler } from '../functions/authorizer/handler.js';
import { createClassifierWorker } from '../functions/classifier/handler.js';
import { createClassifyHandler } from '../functions/classify/handler.js';
import { createIndexerHandler } from '../functions/indexer/handler.js';
import { createQueryHandler } from '../functions/query/handler.js';
import { createRecordHandler } from '../functions/record/handler.js';
import { LAMBDA_ESBUILD, LAMBDA_FUNCTIONS, type LambdaFunctionName } from '../infra/lambda-bundling.js';
import { lambdaContext } from '../local/lambda-context.js';
import { recordFromImage, recordToItem } from '../shared/adapters/aws/dynamodb/record-item.js';
import { defaultClassifier } from '../shared/classifiers/default.js';
import { hashApiKey } from '../shared/domain/api-key.js';
import { newRecord, type StoredRecord } from '../shared/domain/record.js';
import { SCOPES, type Limits } from '../shared/domain/tenant.js';
import { toAuthorizerContext } from '../shared/http/auth-context.js';
import { generateCorpus, queryWorkload } from './corpus.js';
import { FakeDocumentIndex, FakeJobSink, FakeKeyStore, FakeRecordStore, FakeSearchIndex, FakeUsageMeter } from './support/fakes.js';
import { median, percentile } from './support/stats.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface BundleLoad {
  /** The minified bundle, without its source map. */
  bytes: number;
  /** Its source map, 0 when built without one. */
  mapBytes: number;
  /** The median, over `runs` fresh processes, of the time from the start of the import to a loaded module. */
  loadMs: number;
  runs: number;
}

/**
 * Bundles one entry (a path from the repository root) with the stack's esbuild options and times its
 * import in `runs` fresh `node` processes, each given only PATH and `env`. With `sourceMaps`, the bundle
 * carries its source map and node runs with --enable-source-maps, as the stack deploys the functions.
 */
export async function measureBundleLoad(
  entry: string,
  options: { runs: number; env: Record<string, string>; sourceMaps?: boolean },
): Promise<BundleLoad> {
  const dir = mkdtempSync(join(tmpdir(), 'memory-bundle-load-'));
  try {
    const outfile = join(dir, 'index.mjs');
    const sourceMaps = options.sourceMaps ?? false;
    await build({ ...LAMBDA_ESBUILD, sourcemap: sourceMaps, entryPoints: [join(ROOT, entry)], outfile });
    const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(outfile).href)}); console.log(performance.now() - t);`;
    const flags = sourceMaps ? ['--enable-source-maps'] : [];
    const load = () =>
      Number(
        execFileSync(process.execPath, [...flags, '--input-type=module', '-e', script], {
          env: { PATH: process.env.PATH ?? '', ...options.env },
          // Kept, not printed: a failed load throws with it; on Node 20 the AWS SDK also writes a notice there.
          stdio: ['ignore', 'pipe', 'pipe'],
        }).toString(),
      );
    const times = Array.from({ length: options.runs }, load);
    return { bytes: statSync(outfile).size, mapBytes: sourceMaps ? statSync(`${outfile}.map`).size : 0, loadMs: median(times), runs: options.runs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface ColdStart extends BundleLoad {
  name: LambdaFunctionName;
  /** One warm invocation in this process, in microseconds, with the ports answering from memory. */
  warmHandlerUs: { p50: number; p99: number; calls: number };
  /** Events per invocation: 1 for the API functions, a batch for the stream and queue workers. */
  batch: number;
  /** Port calls the fakes saw during the timed invocations (at least one per invocation). */
  portCalls: number;
}

/**
 * The settings the stack gives every function (infra/memory-service-stack.ts), with fake endpoints: the
 * entries only build their clients at load, they call nothing.
 */
const STACK_ENV = {
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
  MEMORY_RECORDS_TABLE: 'memory-records',
  MEMORY_TENANTS_TABLE: 'memory-tenants',
  MEMORY_USAGE_TABLE: 'memory-usage',
  MEMORY_IDEMPOTENCY_TABLE: 'memory-idempotency',
  OPENSEARCH_ENDPOINT: 'https://search-memory.eu-west-1.es.amazonaws.com',
  OPENSEARCH_INDEX: 'memory-records',
  CLASSIFICATION_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/memory-classification',
  POWERTOOLS_SERVICE_NAME: 'memory',
  POWERTOOLS_METRICS_NAMESPACE: 'AgentMemory',
  POWERTOOLS_LOG_LEVEL: 'INFO',
};

/** Bundle size, load time and warm handler time of every Lambda in LAMBDA_FUNCTIONS. */
export async function measureColdStarts(progress: (line: string) => void, options: { runs?: number; warmCalls?: number } = {}): Promise<ColdStart[]> {
  const runs = options.runs ?? 10;
  const warmCalls = options.warmCalls ?? 2000;
  const results: ColdStart[] = [];
  for (const name of LAMBDA_FUNCTIONS) {
    progress(`cold start: ${name}: bundle, and load it in ${runs} fresh processes`);
    const load = await measureBundleLoad(`functions/${name}/index.ts`, {
      runs,
      env: { ...STACK_ENV, AWS_LAMBDA_FUNCTION_NAME: name },
      sourceMaps: true,
    });
    progress(`cold start: ${name}: ${warmCalls} warm invocations`);
    const warm = await timeWarm(await warmCase(name, WARM_UP + warmCalls), warmCalls);
    results.push({ name, ...load, ...warm });
  }
  return results;
}

// ---------------------------------------------------------------------------------------------------------
// Warm invocations.

/** Invocations before the timed ones, so the JIT has compiled the handler's paths. */
const WARM_UP = 200;
/** Records per stream batch and messages per queue batch (the stack allows up to 100 and 10). */
const BATCH = 10;

interface WarmCase {
  batch: number;
  events: unknown[];
  invoke(event: unknown): Promise<unknown>;
  /** Why an answer is not a success, or null when it is. */
  failure(result: unknown): string | null;
  portCalls(): number;
}

async function timeWarm(c: WarmCase, calls: number): Promise<Pick<ColdStart, 'warmHandlerUs' | 'batch' | 'portCalls'>> {
  const check = (result: unknown, i: number) => {
    const failure = c.failure(result);
    if (failure !== null) throw new Error(`warm invocation ${i} failed: ${failure}`);
  };
  for (let i = 0; i < WARM_UP; i++) check(await c.invoke(c.events[i]), i);
  const before = c.portCalls();
  const micros: number[] = [];
  for (let i = WARM_UP; i < WARM_UP + calls; i++) {
    const t = performance.now();
    const result = await c.invoke(c.events[i]);
    micros.push((performance.now() - t) * 1000);
    check(result, i);
  }
  micros.sort((a, b) => a - b);
  return { warmHandlerUs: { p50: percentile(micros, 50), p99: percentile(micros, 99), calls }, batch: c.batch, portCalls: c.portCalls() - before };
}

const TENANT_LIMITS: Limits = { recordQuota: 1_000_000_000, queryQuota: 1_000_000_000, rate: 1000, burst: 2000 };
const API_KEY = 'mem_benchbenchbenchbenchbenchbenchbenchbenchben';

/**
 * The loggers log at ERROR. On the success path nothing logs below ERROR except the indexer's one DEBUG
 * line, so this costs what the stack's INFO costs, and a failure still shows.
 */
const logger = () => new Logger({ serviceName: 'memory', logLevel: 'ERROR' });

/**
 * Metrics as the record and query entries build them, whose EMF documents are serialized as on Lambda
 * but written to nowhere. Powertools writes them through a private console made at construction; there is
 * no option to redirect it, so the benchmark swaps it.
 */
function quietMetrics(): Metrics {
  const metrics = new Metrics({ namespace: 'AgentMemory', serviceName: 'memory' });
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  (metrics as unknown as { console: Console }).console = new Console({ stdout: sink, stderr: sink });
  return metrics;
}

/** Realistic inputs: the benchmark corpus' first records, stored under one tenant. */
function corpusRecords(tenantId: string, count: number): StoredRecord[] {
  const at = Date.now();
  return [...generateCorpus({ records: count })].map(({ record }, i) => newRecord(tenantId, record, new Date(at - (count - i) * 1000)));
}

async function warmCase(name: LambdaFunctionName, events: number): Promise<WarmCase> {
  const tenantId = 'tenant-1';
  const context = lambdaContext(name);
  const authorizer = { principalId: tenantId, ...stringValues(toAuthorizerContext({ tenantId, keyId: 'key_0123456789abcdef', limits: TENANT_LIMITS, scopes: SCOPES, agentId: null, expiresAt: null })) };
  const stored = corpusRecords(tenantId, 500);
  const sample = <T>(i: number, list: readonly T[]) => list[i % list.length]!;
  const proxy = (handler: (e: APIGatewayProxyEvent, c: Context) => Promise<APIGatewayProxyResult>, status: number) => ({
    invoke: (event: unknown) => handler(event as APIGatewayProxyEvent, context),
    failure: (r: unknown) => ((r as APIGatewayProxyResult).statusCode === status ? null : `status ${(r as APIGatewayProxyResult).statusCode}: ${(r as APIGatewayProxyResult).body}`),
  });
  const batchFailure = (r: unknown) => {
    const failures = (r as SQSBatchResponse | DynamoDBBatchResponse).batchItemFailures;
    return failures.length === 0 ? null : `${failures.length} batch item failures`;
  };

  switch (name) {
    case 'record': {
      const records = new FakeRecordStore();
      const handler = createRecordHandler({ records, logger: logger(), metrics: quietMetrics() });
      return {
        batch: 1,
        // The SDK sends an idempotency key with every write; each event has its own, so none is a replay.
        events: Array.from({ length: events }, (_, i) => {
          const { agent_id, type, title, body, client, metadata } = sample(i, stored);
          return apiEvent('POST', '/api/v1/record', authorizer, {
            body: JSON.stringify({ agent_id, type, title, body, ...(client === null ? {} : { client }), ...(metadata === null ? {} : { metadata }) }),
            headers: { 'Idempotency-Key': `bench-${i}` },
          });
        }),
        ...proxy(handler, 201),
        portCalls: () => records.calls.create,
      };
    }
    case 'query': {
      const search = new FakeSearchIndex(stored);
      const usage = new FakeUsageMeter();
      const handler = createQueryHandler({ search, usage, logger: logger(), metrics: quietMetrics() });
      const queries = queryWorkload({ records: 2000 }, 20).map(({ query }) => stringValues(query));
      return {
        batch: 1,
        events: Array.from({ length: events }, (_, i) => apiEvent('GET', '/api/v1/query', authorizer, { query: sample(i, queries) })),
        ...proxy(handler, 200),
        portCalls: () => search.calls.search + usage.calls.countQuery,
      };
    }
    case 'classify': {
      const handler = createClassifyHandler({ classifier: defaultClassifier, logger: logger() });
      return {
        batch: 1,
        events: Array.from({ length: events }, (_, i) => {
          const { title, body } = sample(i, stored);
          return apiEvent('POST', '/v1/classify', authorizer, { body: JSON.stringify({ title, body }) });
        }),
        ...proxy(handler, 200),
        // The classifier is the real one, in process: it is the work, not a port.
        portCalls: () => 0,
      };
    }
    case 'authorizer': {
      const keys = new FakeKeyStore();
      const tenant = await keys.createTenant({ name: 'bench', limits: TENANT_LIMITS });
      await keys.createKey(tenant.tenant_id, { keyId: 'key_0123456789abcdef', keyHash: hashApiKey(API_KEY) });
      const handler = createAuthorizerHandler({ keys, logger: logger() });
      return {
        batch: 1,
        events: Array.from({ length: events }, (_, i) => authorizerEvent(i % 2 === 0 ? 'POST' : 'GET', i % 2 === 0 ? '/api/v1/record' : '/api/v1/query')),
        invoke: (event) => handler(event as APIGatewayRequestAuthorizerEvent, context),
        failure: (r) => {
          const result = r as APIGatewayAuthorizerResult;
          return result.principalId === tenant.tenant_id && result.policyDocument.Statement.every((s) => s.Effect === 'Allow') ? null : `refused: ${JSON.stringify(result)}`;
        },
        portCalls: () => keys.calls.findByHash,
      };
    }
    case 'indexer': {
      const index = new FakeDocumentIndex();
      const jobs = new FakeJobSink();
      const handler = createIndexerHandler({ index, jobs, recordFromImage, logger: logger() });
      // Every record shows up twice on the stream: its write (INSERT) and its classification (MODIFY).
      return {
        batch: BATCH,
        events: Array.from({ length: events }, (_, i) => streamEvent(Array.from({ length: BATCH }, (_, j) => sample(i * BATCH + j, stored)), i)),
        invoke: (event) => handler(event as DynamoDBStreamEvent, context),
        failure: batchFailure,
        portCalls: () => index.calls.apply + jobs.calls.enqueue,
      };
    }
    case 'classifier': {
      const records = new FakeRecordStore();
      records.seed(stored);
      const handler = createClassifierWorker({ records, classifier: defaultClassifier, logger: logger() });
      return {
        batch: BATCH,
        events: Array.from({ length: events }, (_, i) => queueEvent(Array.from({ length: BATCH }, (_, j) => sample(i * BATCH + j, stored)))),
        invoke: (event) => handler(event as SQSEvent, context),
        failure: batchFailure,
        portCalls: () => records.calls.setClassification,
      };
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Events, shaped as API Gateway, DynamoDB Streams and SQS deliver them (local/gateway.ts builds the same).

/** API Gateway hands every query parameter and authorizer context value over as a string. */
function stringValues(values: object): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined && v !== null).map(([k, v]) => [k, String(v)]));
}

const API_ID = 'a1b2c3d4e5';
const STAGE = 'prod';

function requestContext(method: string, path: string, i: number) {
  return {
    accountId: '123456789012',
    apiId: API_ID,
    httpMethod: method,
    path: `/${STAGE}${path}`,
    protocol: 'HTTP/1.1',
    requestId: `bench-request-${i}`,
    requestTimeEpoch: 1_780_000_000_000 + i,
    resourceId: 'abc123',
    resourcePath: path,
    stage: STAGE,
    identity: { sourceIp: '203.0.113.7', userAgent: 'agent-memory-sdk/0.1.0 node/22' },
  };
}

let eventCount = 0;

function apiEvent(
  method: string,
  path: string,
  authorizer: Record<string, string>,
  options: { body?: string; query?: Record<string, string>; headers?: Record<string, string> },
): APIGatewayProxyEvent {
  const headers: Record<string, string> = {
    Host: `${API_ID}.execute-api.eu-west-1.amazonaws.com`,
    'User-Agent': 'agent-memory-sdk/0.1.0 node/22',
    Accept: 'application/json',
    Authorization: `Bearer ${API_KEY}`,
    'X-Amzn-Trace-Id': `Root=1-67890abc-${String(eventCount).padStart(24, '0')}`,
    'X-Forwarded-For': '203.0.113.7',
    'X-Forwarded-Port': '443',
    'X-Forwarded-Proto': 'https',
    ...(options.body === undefined ? {} : { 'Content-Type': 'application/json' }),
    ...options.headers,
  };
  const query = options.query && Object.keys(options.query).length > 0 ? options.query : null;
  return {
    resource: path,
    path,
    httpMethod: method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: query,
    multiValueQueryStringParameters: query && Object.fromEntries(Object.entries(query).map(([k, v]) => [k, [v]])),
    pathParameters: null,
    stageVariables: null,
    body: options.body ?? null,
    isBase64Encoded: false,
    requestContext: { ...requestContext(method, path, eventCount++), authorizer },
  } as unknown as APIGatewayProxyEvent;
}

function authorizerEvent(method: string, path: string): APIGatewayRequestAuthorizerEvent {
  const headers = { Authorization: `Bearer ${API_KEY}`, Host: `${API_ID}.execute-api.eu-west-1.amazonaws.com`, 'User-Agent': 'agent-memory-sdk/0.1.0 node/22' };
  return {
    type: 'REQUEST',
    methodArn: `arn:aws:execute-api:eu-west-1:123456789012:${API_ID}/${STAGE}/${method}${path}`,
    resource: path,
    path,
    httpMethod: method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    pathParameters: null,
    queryStringParameters: {},
    multiValueQueryStringParameters: {},
    stageVariables: null,
    requestContext: requestContext(method, path, eventCount++),
  } as unknown as APIGatewayRequestAuthorizerEvent;
}

const image = (record: StoredRecord) => marshall(recordToItem(record), { removeUndefinedValues: true }) as Record<string, AttributeValue>;

/** A stream batch: each record's INSERT, or every other one the MODIFY of its classification. */
function streamEvent(records: StoredRecord[], batch: number): DynamoDBStreamEvent {
  const Records = records.map((record, j): DynamoDBRecord => {
    const insert = j % 2 === 0;
    const classified: StoredRecord = { ...record, classification: { type: record.type, confidence: 0.93, model: 'linear-v3', classified_at: record.created_at } };
    const keys = marshall({ pk: recordToItem(record).pk, id: record.id }) as Record<string, AttributeValue>;
    const dynamodb: StreamRecord = {
      ApproximateCreationDateTime: Math.floor(Date.parse(record.created_at) / 1000),
      Keys: keys,
      NewImage: image(insert ? record : classified),
      SequenceNumber: `4${String(batch * BATCH + j).padStart(20, '0')}`,
      SizeBytes: 1000,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    };
    if (!insert) dynamodb.OldImage = image(record);
    return {
      eventID: `${batch}-${j}`,
      eventName: insert ? 'INSERT' : 'MODIFY',
      eventVersion: '1.1',
      eventSource: 'aws:dynamodb',
      awsRegion: 'eu-west-1',
      eventSourceARN: 'arn:aws:dynamodb:eu-west-1:123456789012:table/memory-records/stream/2026-05-20T00:00:00.000',
      dynamodb,
    };
  });
  return { Records };
}

function queueEvent(records: StoredRecord[]): SQSEvent {
  return {
    Records: records.map((record, j) => ({
      messageId: `${record.id}-${j}`,
      receiptHandle: `handle-${record.id}`,
      body: JSON.stringify({ tenant_id: record.tenant_id, record_id: record.id }),
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: String(Date.parse(record.created_at)),
        SenderId: 'AROAEXAMPLE:indexer',
        ApproximateFirstReceiveTimestamp: String(Date.parse(record.created_at) + 50),
      },
      messageAttributes: {},
      md5OfBody: '0'.repeat(32),
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:memory-classification',
      awsRegion: 'eu-west-1',
    })),
  };
}
