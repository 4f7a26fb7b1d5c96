import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Limits } from '../../shared/domain/tenant.js';
import { startLocalService, type LocalService } from '../../local/app.js';
import { loadConfig } from '../../local/config.js';
import { createTenantWithKey, type IssuedKey } from '../../local/tenants.js';

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
  stop(): Promise<void>;
}

/** Starts the real local service on an ephemeral port with a temporary data directory. */
export async function startTestService(env: Record<string, string> = {}): Promise<TestService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'memory-test-'));
  const config = loadConfig({ PORT: '0', MEMORY_DATA_DIR: dataDir, LOG_LEVEL: 'SILENT', MEMORY_JOB_POLL_MS: '50', ...env });
  const service = await startLocalService(config);
  const newTenant = (limits: Partial<Limits> = {}, name = 'test') =>
    createTenantWithKey(service.adapters.keys, name, { ...ROOMY, ...limits });
  return {
    ...service,
    dataDir,
    tenant: await newTenant(),
    newTenant,
    client: (apiKey: string) => new Client(service.url, apiKey),
    stop: async () => {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A search answer: the result array on 200, an error body otherwise. */
export type SearchBody = any[] & { error?: string; message?: string; retry_after?: number };

/** A minimal HTTP client for the API, over real fetch. */
export class Client {
  constructor(readonly baseUrl: string, readonly apiKey: string | null) {}

  async request<T = any>(method: string, path: string, init: { body?: unknown; rawBody?: string; headers?: Record<string, string> } = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...(this.apiKey === null ? {} : { Authorization: `Bearer ${this.apiKey}` }) };
    let body: string | undefined = init.rawBody;
    if (init.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(init.body);
    }
    const res = await fetch(this.baseUrl + path, { method, headers: { ...headers, ...init.headers }, body });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) };
  }

  remember(record: unknown, headers: Record<string, string> = {}) {
    return this.request('POST', '/api/v1/record', { body: record, headers });
  }

  recall(params: Record<string, string | number> = {}) {
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
