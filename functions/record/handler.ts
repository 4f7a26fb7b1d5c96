import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { readIdempotencyKey, requestHash } from '../../shared/domain/idempotency.js';
import { quotaMonth } from '../../shared/domain/quota-month.js';
import { newRecord, recordBytes } from '../../shared/domain/record.js';
import { parseRecordInput } from '../../shared/domain/validation.js';
import { apiFunction } from '../../shared/http/api-route.js';
import { agentFor } from '../../shared/http/access.js';
import { principalOf } from '../../shared/http/auth-context.js';
import { headerValue, jsonResult } from '../../shared/http/responses.js';
import { usageMetrics } from '../../shared/http/usage-metrics.js';
import type { RecordStore } from '../../shared/ports.js';

export interface RecordHandlerDeps {
  records: Pick<RecordStore, 'create'>;
  logger: Logger;
  /** Per-tenant usage metrics (on AWS); none locally. */
  metrics?: Metrics;
  now?: () => Date;
}

/** `POST /api/v1/record` (memory_remember): validates, stores atomically with the quota, answers 201. */
export function createRecordHandler({ records, logger, metrics, now = () => new Date() }: RecordHandlerDeps) {
  const usage = usageMetrics(metrics);
  return apiFunction(logger, 'record', {
    memory_remember: async (event, body) => {
      const principal = principalOf(event);
      const { tenantId, limits } = principal;
      const input = parseRecordInput(body);
      agentFor(principal, input.agent_id);
      const key = readIdempotencyKey(headerValue(event.headers, 'idempotency-key'));
      const at = now();
      const record = newRecord(tenantId, input, at);
      const { receipt, replayed } = await records
        .create(tenantId, record, {
          recordQuota: limits.recordQuota,
          month: quotaMonth(at),
          ...(key === undefined ? {} : { idempotency: { key, requestHash: requestHash(input) } }),
        })
        .catch((error: unknown) => {
          usage.rejected(tenantId, error);
          throw error;
        });
      if (!replayed) usage.recordWritten(tenantId, recordBytes(record));
      const headers: Record<string, string> = { Location: `/api/v1/record/${receipt.id}` };
      if (replayed) headers['Idempotent-Replayed'] = 'true';
      return jsonResult(201, receipt, headers);
    },
  });
}
