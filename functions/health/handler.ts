import type { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { jsonResult } from '../../shared/http/responses.js';
import type { RecordStore } from '../../shared/ports.js';

export interface HealthHandlerDeps {
  records: Pick<RecordStore, 'ping'>;
  logger: Logger;
  /** How long the database may take to answer before the check says it does not: 2 s. */
  timeoutMs?: number;
}

/** Never cached: a health check that a proxy or a client answers from a cache checks nothing. */
const NO_STORE = { 'Cache-Control': 'no-store' };

/**
 * `GET /healthz` (docs/api.md, "Health"): no key, and no tenant's data. 200
 * `{"status":"ok"}` when the database answers a read (RecordStore.ping), 503 `{"status":"unavailable"}`
 * when it does not, or not within `timeoutMs`; the reason goes to the log, never to the caller.
 */
export function createHealthHandler({ records, logger, timeoutMs = 2000 }: HealthHandlerDeps) {
  return async (_event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        records.ping(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`the database did not answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      return jsonResult(200, { status: 'ok' }, NO_STORE);
    } catch (error) {
      logger.error('health check: the database does not answer', { error: error instanceof Error ? error.message : String(error) });
      return jsonResult(503, { status: 'unavailable' }, NO_STORE);
    } finally {
      clearTimeout(timer);
    }
  };
}
