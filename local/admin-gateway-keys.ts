/** API Gateway's side of the admin CLI's keys on a deployed stack: registering new keys, moving keys to their usage plan. */
import type { KeyThrottle } from '../shared/adapters/aws/gateway/usage-plans.js';
import type { ApiKeyInfo, Tenant } from '../shared/domain/tenant.js';
import { causeOf, CliError } from './admin-cli-error.js';
import type { AdminStores } from './backend.js';
import type { IssuedKey } from './tenants.js';

/**
 * Registers a key that was just stored with API Gateway. If that fails, the key is revoked again: a key
 * that API Gateway refuses would only mislead whoever holds it, and a new one costs nothing.
 */
export async function registerIssued(stores: AdminStores, issued: IssuedKey, limits: KeyThrottle, retry: string): Promise<IssuedKey> {
  if (!stores.gateway) return issued;
  try {
    await stores.gateway.register(issued.key_id, limits);
    return issued;
  } catch (error) {
    const details = { tenant_id: issued.tenant_id, key_id: issued.key_id };
    const failed = `API Gateway did not register key ${issued.key_id} (${causeOf(error)})`;
    try {
      await stores.keys.revoke({ keyId: issued.key_id });
    } catch (revokeError) {
      throw new CliError(
        'gateway_error',
        `${failed}, and revoking it failed too (${causeOf(revokeError)}): the key is stored but API Gateway refuses it. ` +
          `Run key revoke ${issued.key_id}; then, to retry, ${retry}.`,
        1,
        details,
      );
    }
    throw new CliError('gateway_error', `${failed}; the key was revoked, so no usable key was issued. To retry, ${retry}.`, 1, details);
  }
}

/** A key's token bucket, field by field as the authorizer reads it: its own rate and burst where it has them, else its tenant's. */
export const effectiveThrottle = (key: Pick<ApiKeyInfo, 'rate' | 'burst'>, tenant: Tenant): KeyThrottle => ({
  rate: key.rate ?? tenant.limits.rate,
  burst: key.burst ?? tenant.limits.burst,
});

/**
 * After a change of the tenant's rate or burst, puts each of its active keys that uses the tenant's rate or
 * burst (not both of its own) in the usage plan for its new effective limits. A key already there is left
 * alone, so running the same update again after a failure finishes the work.
 */
export async function moveKeys(stores: AdminStores, tenant: Tenant): Promise<void> {
  if (!stores.gateway) return;
  const affected = (await stores.keys.listKeys(tenant.tenant_id)).filter((k) => k.status === 'active' && (k.rate === null || k.burst === null));
  let done = 0;
  for (const key of affected) {
    const limits = effectiveThrottle(key, tenant);
    try {
      await stores.gateway.move(key.key_id, limits);
      done++;
    } catch (error) {
      throw new CliError(
        'gateway_error',
        `tenant ${tenant.tenant_id} is updated, but API Gateway did not move key ${key.key_id} to the usage plan for rate ` +
          `${limits.rate}, burst ${limits.burst} (${causeOf(error)}); ${done} of the ${affected.length} keys that use the tenant's limits ` +
          `are in their new plan. Until the others are, API Gateway throttles them at their old limits, or refuses key ${key.key_id} if it ` +
          'was taken out of its old plan. Run the same tenant update again to retry.',
        1,
        { tenant_id: tenant.tenant_id, key_id: key.key_id },
      );
    }
  }
}
