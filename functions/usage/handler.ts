import type { Logger } from '@aws-lambda-powertools/logger';
import { quotaMonth } from '../../shared/domain/quota-month.js';
import { parseUsageQuery } from '../../shared/domain/validation.js';
import { apiFunction } from '../../shared/http/api-route.js';
import { principalOf } from '../../shared/http/auth-context.js';
import { jsonResult } from '../../shared/http/responses.js';
import type { UsageMeter } from '../../shared/ports.js';

export interface UsageHandlerDeps {
  usage: Pick<UsageMeter, 'list'>;
  logger: Logger;
  now?: () => Date;
}

/** Used, quota and what is left of it; never below 0 (a quota lowered below what was used leaves 0). */
function allowance(used: number, quota: number) {
  return { used, quota, remaining: Math.max(0, quota - used) };
}

/**
 * `GET /api/v1/usage` (memory_usage): the caller's tenant's current UTC month, read from the counters that
 * enforce the quotas (strongly consistent on DynamoDB), against the quotas and the rate limit the key's
 * requests are held to (the authorizer's), so it agrees with what the next write or search is told; with
 * `include=key`, also the calling key's scopes, agent and end. It counts against neither quota.
 */
export function createUsageHandler({ usage, logger, now = () => new Date() }: UsageHandlerDeps) {
  return apiFunction(logger, 'usage', {
    memory_usage: async (event) => {
      const { tenantId, limits, scopes, agentId, expiresAt } = principalOf(event);
      const { include } = parseUsageQuery(event.queryStringParameters ?? {});
      const month = quotaMonth(now());
      const [counted] = await usage.list(month, tenantId);
      return jsonResult(200, {
        tenant_id: tenantId,
        month,
        records: allowance(counted?.records ?? 0, limits.recordQuota),
        queries: allowance(counted?.queries ?? 0, limits.queryQuota),
        rate_limit: { rate: limits.rate, burst: limits.burst },
        // decisions.md's object, field for field, unless the caller asks for the key too.
        ...(include === 'key' ? { key: { scopes, agent_id: agentId, expires_at: expiresAt } } : {}),
      });
    },
  });
}
