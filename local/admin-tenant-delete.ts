import { setTimeout as sleep } from 'node:timers/promises';
import { AUTHORIZER_CACHE_TTL_SECONDS } from '../infra/settings.js';
import type { Tenant } from '../shared/domain/tenant.js';
import type { ErasedCounts } from '../shared/ports.js';
import { causeOf, CliError } from './admin-cli-error.js';
import type { AdminStores } from './backend.js';
import type { LocalConfig } from './config.js';

/** How long an authorization can be reused after its key is revoked: the authorizer's cache on AWS, the local gateway's elsewhere. */
function authorizationCacheMs(config: LocalConfig): number {
  return config.aws && !config.aws.dynamodbEndpoint ? AUTHORIZER_CACHE_TTL_SECONDS * 1000 : config.authCacheMs;
}

/** Adds erase counts kind by kind. */
function addCounts(a: ErasedCounts, b: ErasedCounts): ErasedCounts {
  const sum = { ...a };
  for (const [kind, n] of Object.entries(b)) sum[kind] = (sum[kind] ?? 0) + n;
  return sum;
}

/**
 * Erases a tenant, in an order that can be run again from any point it was cut short at:
 * 1. revoke its keys, so that nothing new is written while its records go, and disable them in API
 *    Gateway (a failure there stops before anything is erased);
 * 2. wait until no cached authorization of a key revoked just now can be used any more;
 * 3. erase its records (with their search index entries), jobs and idempotency keys;
 * 4. delete the tenant and its keys;
 * 5. erase again whatever a request authorized before step 1 wrote after step 3.
 * The usage counters stay, for billing.
 */
export async function deleteTenant(stores: AdminStores, config: LocalConfig, tenant: Tenant, progress: (text: string) => void) {
  const { keys, records } = stores;
  const id = tenant.tenant_id;
  const tenantKeys = await keys.listKeys(id);
  let revokedUntil = 0;
  for (const key of tenantKeys) {
    const revoked = key.status === 'active' ? await keys.revoke({ keyId: key.key_id }) : key;
    if (revoked?.revoked_at) revokedUntil = Math.max(revokedUntil, Date.parse(revoked.revoked_at));
  }
  if (stores.gateway) {
    for (const key of tenantKeys) {
      try {
        await stores.gateway.disable(key.key_id);
      } catch (error) {
        throw new CliError(
          'gateway_error',
          `API Gateway did not disable key ${key.key_id} (${causeOf(error)}). Nothing was erased; the tenant's keys are revoked, so ` +
            `the authorizer refuses them. Run tenant delete --tenant ${id} --confirm again to retry.`,
          1,
          { tenant_id: id, key_id: key.key_id },
        );
      }
    }
  }
  const wait = revokedUntil + authorizationCacheMs(config) - Date.now();
  if (wait > 0) {
    progress(`the tenant's keys are revoked; waiting ${Math.ceil(wait / 1000)} s until no cached authorization of them can be used`);
    await sleep(wait);
  }
  // The store reports large erases page by page; a line a second at most is enough to show it is moving.
  let reported = Date.now();
  const eraseProgress = (text: string) => {
    if (Date.now() - reported < 1000) return;
    reported = Date.now();
    progress(`erasing: ${text}`);
  };
  let erased = await records.eraseTenant(id, eraseProgress);
  const deleted = await keys.deleteTenant(id);
  if ((await records.list(id, { filters: { include_superseded: true }, order: 'asc', limit: 1 })).length > 0) {
    erased = addCounts(erased, await records.eraseTenant(id, eraseProgress));
  }
  return {
    tenant_id: id,
    name: tenant.name,
    removed: { ...erased, api_keys: deleted?.keys ?? 0 },
    ...(stores.gateway ? { api_gateway_keys_disabled: tenantKeys.length } : {}),
    search_index: config.aws
      ? "each record's entry leaves the search index when its delete reaches the indexer through the table's stream (within seconds)"
      : "the tenant's search index (its postings and statistics, search_index_rows) was removed after its records",
    kept: `the usage counters: usage --tenant ${id} still shows the months it used, for billing`,
  };
}
