import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { AppError } from '../../shared/domain/errors.js';
import { parseQuery } from '../../shared/domain/query-parse.js';
import { quotaMonth, secondsToNextMonth } from '../../shared/domain/quota-month.js';
import { publicHit } from '../../shared/domain/record.js';
import { parseSearchParams } from '../../shared/domain/validation.js';
import { apiFunction } from '../../shared/http/api-route.js';
import { agentFor } from '../../shared/http/access.js';
import { principalOf } from '../../shared/http/auth-context.js';
import { jsonResult } from '../../shared/http/responses.js';
import { usageMetrics } from '../../shared/http/usage-metrics.js';
import type { SearchIndex, UsageMeter } from '../../shared/ports.js';

export interface QueryHandlerDeps {
  search: SearchIndex;
  usage: UsageMeter;
  logger: Logger;
  /** Per-tenant usage metrics (on AWS); none locally. */
  metrics?: Metrics;
  now?: () => Date;
}

/**
 * `GET /api/v1/query` (memory_recall): searches the tenant's records. The search runs first and is
 * counted only when it succeeds, so a failed search never uses quota; when the quota is used up the
 * answer is 429 `query_quota_exceeded` with the seconds to the next UTC month.
 */
export function createQueryHandler({ search, usage, logger, metrics, now = () => new Date() }: QueryHandlerDeps) {
  const usageMetric = usageMetrics(metrics);
  return apiFunction(logger, 'query', {
    memory_recall: async (event) => {
      const principal = principalOf(event);
      const { tenantId, limits } = principal;
      const params = parseSearchParams(event.queryStringParameters ?? {});
      const hits = await search.search(tenantId, {
        text: parseQuery(params.q),
        agent_id: agentFor(principal, params.agent_id),
        type: params.type,
        client: params.client,
        since: params.since,
        until: params.until,
        include_superseded: params.include_superseded,
        min_rank: params.min_rank,
        limit: params.limit,
      });
      const at = now();
      if (!(await usage.countQuery(tenantId, quotaMonth(at), limits.queryQuota))) {
        const error = new AppError('query_quota_exceeded', 'The monthly query quota is used up', secondsToNextMonth(at));
        usageMetric.rejected(tenantId, error);
        throw error;
      }
      usageMetric.queryServed(tenantId);
      return jsonResult(200, hits.map(publicHit));
    },
  });
}
