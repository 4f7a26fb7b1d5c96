import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Limits } from '../../shared/domain/tenant.js';
import { startLocalService, type LocalService } from '../../local/app.js';
import { loadConfig } from '../../local/config.js';
import { createTenantWithKey, type IssuedKey } from '../../local/tenants.js';
import { awsShapedEnv, createTestTables } from './dynamodb.js';
import { checkAnswer } from './response-shapes.js';
import { startStreamGate, type StreamGate } from './stream-gate.js';

/**
 * The backend the e2e suites run on: `sqlite` (the embedded default), or `dynamodb`, the AWS-shaped local
 * mode on DynamoDB Local with its stream. jest.config.js runs the HTTP suites once in each.
 */
export const TEST_BACKEND: 'sqlite' | 'dynamodb' = process.env.MEMORY_TEST_BACKEND === 'dynamodb' ? 'dynamodb' : 'sqlite';

/** Generous limits so that tests not about limits never meet one. */
export const ROOMY: Limits = { recordQuota: 1_000_000, queryQuota: 1_000_000, rate: 10_000, burst: 10_000 };

export interface TestService extends LocalService {
  dataDir: string;
  /** A tenant with roomy limits, created for the test. */
  tenant: IssuedKey;
  /** Creates another tenant and returns its first key. */
  newTenant(limits?: Partial<Limits>, name?: string): Promise<IssuedKey>;
  /** A client bound to one key. */
  client(apiKey: string): Client;
  /**
   * In the AWS-shaped mode started with `{ streamGate: true }`, the gate that can hold the table's stream
   * back, so that the search index falls behind the table (stream-gate.ts); null otherwise (SQLite has no
   * stream: its index changes with the table, in one transaction).
   */
  stream: StreamGate | null;
  /**
   * Waits until the search index has merged every record written so far, so that a search reads none of
   * them from the tail (shared/adapters/local/search-merge.ts): a test of what an update does to the index
   * itself, not only to a record the search still reads from the records table. Reads the index file on a
   * connection of its own (in the AWS-shaped mode, the index the stream writes, once it has caught up).
   */
  indexMerged(timeoutMs?: number): Promise<void>;
  /**
   * Closes the service and starts it again on the same data (data directory, and tables in the AWS-shaped
   * mode) and the same port, as a restart of the server would: clients made before keep working.
   */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** The settings that put a test service on fresh DynamoDB Local tables, and how to drop them. */
async function dynamoDbEnv(): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  const endpoint = process.env.MEMORY_TEST_DYNAMODB_ENDPOINT;
  if (endpoint === undefined) throw new Error('the AWS-shaped e2e run needs DynamoDB Local (see jest.config.js)');
  const tables = await createTestTables(endpoint);
  return { env: awsShapedEnv(tables), drop: () => tables.drop() };
}

/**
 * Starts the real local service, on the test backend, on an ephemeral port with a temporary data directory.
 * With `streamGate`, the AWS-shaped mode reaches DynamoDB Local through a gate that can hold its stream back.
 */
export async function startTestService(env: Record<string, string> = {}, options: { streamGate?: boolean } = {}): Promise<TestService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'memory-test-'));
  const dynamo = TEST_BACKEND === 'dynamodb' ? await dynamoDbEnv() : null;
  const gate = dynamo && options.streamGate ? await startStreamGate(dynamo.env.DYNAMODB_ENDPOINT!) : null;
  const config = loadConfig({
    PORT: '0',
    MEMORY_DATA_DIR: dataDir,
    LOG_LEVEL: 'SILENT',
    MEMORY_JOB_POLL_MS: '50',
    ...dynamo?.env,
    ...(gate ? { DYNAMODB_ENDPOINT: gate.endpoint } : {}),
    ...env,
  });
  // The fields of the running service; restart replaces them.
  let service = await startLocalService(config);
  const newTenant = (limits: Partial<Limits> = {}, name = 'test') =>
    createTenantWithKey(service.backend.keys, name, { ...ROOMY, ...limits });
  const test: TestService = {
    ...service,
    dataDir,
    tenant: await newTenant(),
    newTenant,
    client: (apiKey: string) => new Client(service.url, apiKey, () => service.backend.settle()),
    stream: gate,
    indexMerged: async (timeoutMs = 10_000) => {
      await service.backend.settle();
      const file = TEST_BACKEND === 'dynamodb' ? join(dataDir, 'dynamodb-index.db') : config.databaseFile;
      const index = new Database(file, { readonly: true, fileMustExist: true });
      try {
        const pending = index.prepare('SELECT count(*) FROM records WHERE seq > (SELECT merged_upto FROM search_state)').pluck();
        await eventually(async () => pending.get() === 0, timeoutMs);
      } finally {
        index.close();
      }
    },
    restart: async () => {
      await service.close();
      service = await startLocalService({ ...config, port: Number(new URL(service.url).port) });
      Object.assign(test, { url: service.url, server: service.server, backend: service.backend, firstKey: service.firstKey, metricsUrl: service.metricsUrl });
    },
    stop: async () => {
      await service.close();
      await gate?.close();
      await dynamo?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  // close() is the running service's, whichever that is.
  test.close = () => service.close();
  return test;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A search answer: the result array on 200, an error body otherwise. */
export type SearchBody = any[] & { error?: string; message?: string; retry_after?: number };

/**
 * A minimal HTTP client for the API, over real fetch. Every answer is checked against the documented
 * response schemas (test/support/response-shapes.ts). In the AWS-shaped mode search follows the table
 * through the stream, so `recall` first waits for the stream to catch up (`beforeSearch`): the one place
 * the suites wait, and only where the service promises eventual consistency.
 */
export class Client {
  constructor(
    readonly baseUrl: string,
    readonly apiKey: string | null,
    private readonly beforeSearch: () => Promise<void> = async () => undefined,
  ) {}

  async request<T = any>(method: string, path: string, init: { body?: unknown; rawBody?: string; headers?: Record<string, string> } = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...(this.apiKey === null ? {} : { Authorization: `Bearer ${this.apiKey}` }) };
    let body: string | undefined = init.rawBody;
    if (init.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(init.body);
    }
    const res = await fetch(this.baseUrl + path, { method, headers: { ...headers, ...init.headers }, body });
    const text = await res.text();
    const parsed: unknown = text === '' ? undefined : JSON.parse(text);
    checkAnswer(method, path, res.status, res.headers, parsed);
    return { status: res.status, headers: res.headers, body: parsed as T };
  }

  remember(record: unknown, headers: Record<string, string> = {}) {
    return this.request('POST', '/api/v1/record', { body: record, headers });
  }

  /** `PATCH /api/v1/record/{id}`: changes the fields `patch` names (`headers` may carry If-Match). */
  update(id: string, patch: unknown, headers: Record<string, string> = {}) {
    return this.request('PATCH', `/api/v1/record/${id}`, { body: patch, headers });
  }

  async recall(params: Record<string, string | number> = {}) {
    await this.beforeSearch();
    const qs = new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();
    return this.request<SearchBody>('GET', `/api/v1/query${qs ? `?${qs}` : ''}`);
  }

  classify(input: unknown) {
    return this.request('POST', '/v1/classify', { body: input });
  }
}

/** A valid record with overrides. */
export function aRecord(overrides: Record<string, unknown> = {}) {
  return { agent_id: 'agent-1', type: 'fact', title: 'The user prefers dark mode', body: 'Noted during setup.', ...overrides };
}

/** Polls `check` until it returns a truthy value or `timeoutMs` passes. */
export async function eventually<T>(check: () => Promise<T | undefined | null | false>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}
