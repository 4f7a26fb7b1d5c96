import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { readIdempotencyKey, requestHash } from '../../shared/domain/idempotency.js';
import { quotaMonth } from '../../shared/domain/quota-month.js';
import { AppError } from '../../shared/domain/errors.js';
import { newRecord, publicRecord, recordBytes, recordIdOf, recordNotFound } from '../../shared/domain/record.js';
import { parseRecordInput, parseRecordPatch } from '../../shared/domain/validation.js';
import { etagOf, ifMatchVersions } from '../../shared/domain/versions.js';
import { apiFunction } from '../../shared/http/api-route.js';
import { agentFor, mayChange } from '../../shared/http/access.js';
import { principalOf } from '../../shared/http/auth-context.js';
import { headerValue, jsonResult } from '../../shared/http/responses.js';
import { usageMetrics } from '../../shared/http/usage-metrics.js';
import type { RecordStore } from '../../shared/ports.js';

export interface RecordHandlerDeps {
  records: Pick<RecordStore, 'create' | 'get' | 'update'>;
  logger: Logger;
  /** Per-tenant usage metrics (on AWS); none locally. */
  metrics?: Metrics;
  now?: () => Date;
}

/** The ids a write supersedes, as the stores keep them, without repeats; one that cannot be a record id is 404, naming it. */
function supersededIds(named: readonly string[]): string[] {
  const ids = new Set<string>();
  for (const raw of named) {
    const id = recordIdOf(raw);
    if (id === null) throw new AppError('not_found', `supersedes names no record with id ${JSON.stringify(raw)}`);
    ids.add(id);
  }
  return [...ids];
}

/**
 * `POST /api/v1/record` (memory_remember): validates, stores atomically with the quota (and the records it
 * supersedes), answers 201. `PATCH /api/v1/record/{id}` (memory_update): changes a record in place, answers
 * 200 with the record and its new ETag. Both need the write scope, and only they may write records.
 */
export function createRecordHandler({ records, logger, metrics, now = () => new Date() }: RecordHandlerDeps) {
  const usage = usageMetrics(metrics);
  return apiFunction(logger, 'record', {
    memory_remember: async (event, body) => {
      const principal = principalOf(event);
      const { tenantId, limits } = principal;
      const input = parseRecordInput(body);
      const { supersedes } = input;
      agentFor(principal, input.agent_id);
      const key = readIdempotencyKey(headerValue(event.headers, 'idempotency-key'));
      const at = now();
      const record = newRecord(tenantId, input, at);
      const { receipt, replayed } = await records
        .create(tenantId, record, {
          recordQuota: limits.recordQuota,
          month: quotaMonth(at),
          ...(key === undefined ? {} : { idempotency: { key, requestHash: requestHash(input) } }),
          ...(supersedes === undefined ? {} : { supersedes: { ids: supersededIds(supersedes), agentId: principal.agentId } }),
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
    memory_update: async (event, body) => {
      const principal = principalOf(event);
      const { tenantId } = principal;
      const patch = parseRecordPatch(body);
      const ifVersions = ifMatchVersions(headerValue(event.headers, 'if-match'));
      const id = recordIdOf(event.pathParameters?.id ?? '');
      const visible = id !== null && (await mayChange(principal, id, (t, i) => records.get(t, i)));
      const updated = visible ? await records.update(tenantId, id, patch, { ifVersions, at: now() }) : null;
      if (!updated) throw recordNotFound();
      return jsonResult(200, publicRecord(updated), { ETag: etagOf(updated.version) });
    },
  });
}
