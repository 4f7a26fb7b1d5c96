import { z } from 'zod';
import { MemoryApiError, MemoryClient, MemoryConnectionError, MemoryTimeoutError, type Fetch } from '../sdk/src/index.js';

/**
 * What the MCP server and the CLI share: where the memory API is and which key to use (MEMORY_API_URL,
 * MEMORY_API_KEY), and how a failed SDK call is reported, with the API's error code or one of two of
 * their own, `timeout` and `connection_failed`.
 */

/** Where the memory API is and which key to use. */
export interface ApiConfig {
  /** The API's base URL: the local server, or the API Gateway stage URL. */
  url: string;
  apiKey: string;
}

/** The local server as `npm start` runs it. */
export const DEFAULT_API_URL = 'http://127.0.0.1:8787';

const apiEnvSchema = z.object({
  MEMORY_API_URL: z
    .string()
    .default(DEFAULT_API_URL)
    .refine((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), 'must be an http:// or https:// URL'),
  MEMORY_API_KEY: z.string().optional(),
});

/** A setting or an argument that is missing or malformed; its message says which and how to fix it. */
export class ConfigError extends Error {
  override name = 'ConfigError';

  /** Exit code 2 for a malformed command line, 1 for a bad setting. */
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

/** Reads MEMORY_API_URL (default the local server) and MEMORY_API_KEY (required); throws a ConfigError that names the fix. */
export function loadApiConfig(env: NodeJS.ProcessEnv): ApiConfig {
  const parsed = apiEnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${problems}`);
  }
  const apiKey = parsed.data.MEMORY_API_KEY?.trim();
  if (!apiKey) {
    throw new ConfigError(
      'MEMORY_API_KEY is not set. Set it to an API key of the memory service (mem_…): the one `npm start` printed on ' +
        'its first start, or one from `npm run --silent admin -- key create --tenant <tenant_id>`.',
    );
  }
  return { url: parsed.data.MEMORY_API_URL, apiKey };
}

/** The SDK client for these settings, over `fetch` (the global one by default). */
export function createClient(config: ApiConfig, fetch?: Fetch): MemoryClient {
  return new MemoryClient({ baseUrl: config.url, apiKey: config.apiKey, ...(fetch ? { fetch } : {}) });
}

/** The error of a failed call: the API's `{error, message}`, or `timeout` / `connection_failed` when no answer came. */
export interface ErrorJson {
  error: string;
  message: string;
  retry_after?: number;
  request_id?: string;
}

/**
 * Names a failed SDK call: the API's own code and message, or `timeout` / `connection_failed` when no
 * answer came. Anything that is not a MemoryError (a bug) is rethrown.
 */
export function errorBody(error: unknown, apiUrl: string): ErrorJson {
  if (error instanceof MemoryApiError) {
    return {
      error: error.code,
      message: error.message,
      ...(error.retryAfter === undefined ? {} : { retry_after: error.retryAfter }),
      ...(error.requestId === undefined ? {} : { request_id: error.requestId }),
    };
  }
  if (error instanceof MemoryTimeoutError) {
    return { error: 'timeout', message: `the memory API at ${apiUrl} did not answer in time (${error.message})` };
  }
  if (error instanceof MemoryConnectionError) {
    // The SDK's message already names the cause (fetch failed: ECONNREFUSED).
    return {
      error: 'connection_failed',
      message: `could not reach the memory API at ${apiUrl} (${error.message}). Is it running, and is MEMORY_API_URL right?`,
    };
  }
  throw error;
}
