import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { AppError } from '../../shared/domain/errors.js';
import { recordIdOf, recordNotFound } from '../../shared/domain/record.js';
import { parseForgetInput } from '../../shared/domain/validation.js';
import { apiFunction } from '../../shared/http/api-route.js';
import { agentFor, mayChange } from '../../shared/http/access.js';
import { principalOf } from '../../shared/http/auth-context.js';
import { jsonResult } from '../../shared/http/responses.js';
import { usageMetrics } from '../../shared/http/usage-metrics.js';
import type { RecordStore } from '../../shared/ports.js';

export interface ForgetHandlerDeps {
  records: Pick<RecordStore, 'get' | 'delete' | 'forget' | 'forgetJob'>;
  logger: Logger;
  /** Per-tenant usage metrics (on AWS); none locally. */
  metrics?: Metrics;
  now?: () => Date;
}

/**
 * `DELETE /api/v1/record/{id}` (memory_delete), `POST /api/v1/forget` (memory_forget) and
 * `GET /api/v1/forget/{job_id}`: everything that deletes records, in one function because it alone may
 * delete (least privilege: the other functions cannot). A delete never gives quota back.
 */
export function createForgetHandler({ records, logger, metrics, now = () => new Date() }: ForgetHandlerDeps) {
  const usage = usageMetrics(metrics);
  return apiFunction(logger, 'forget', {
    memory_delete: async (event) => {
      const principal = principalOf(event);
      const { tenantId } = principal;
      const id = recordIdOf(event.pathParameters?.id ?? '');
      const visible = id !== null && (await mayChange(principal, id, (t, i) => records.get(t, i)));
      const deleted = visible ? await records.delete(tenantId, id) : null;
      if (!deleted) throw recordNotFound();
      usage.recordsDeleted(tenantId, 1);
      return jsonResult(200, deleted);
    },
    memory_forget: async (event, body) => {
      const principal = principalOf(event);
      const { tenantId } = principal;
      const { dry_run = false, ids, ...rest } = parseForgetInput(body);
      // Ids compare as the stores keep them (lowercase); one that cannot be a record id matches nothing.
      const selectors = {
        ...rest,
        // A key bound to an agent forgets that agent's records only.
        agent_id: agentFor(principal, rest.agent_id),
        ...(ids === undefined ? {} : { ids: ids.map(recordIdOf).filter((id) => id !== null) }),
      };
      const outcome = await records.forget(tenantId, selectors, { dryRun: dry_run, at: now() });
      if (outcome.kind === 'job') {
        usage.recordsDeleted(tenantId, outcome.matched);
        return jsonResult(202, { job_id: outcome.job_id, matched: outcome.matched }, { Location: `/api/v1/forget/${outcome.job_id}` });
      }
      usage.recordsDeleted(tenantId, outcome.deleted);
      return jsonResult(200, { matched: outcome.matched, deleted: outcome.deleted, dry_run });
    },
    memory_forget_status: async (event) => {
      const job = await records.forgetJob(principalOf(event).tenantId, event.pathParameters?.job_id ?? '');
      if (!job) throw new AppError('not_found', 'No forget job with this id');
      return jsonResult(200, job);
    },
  });
}
