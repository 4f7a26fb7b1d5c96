import { generateApiKey, generateKeyId, hashApiKey } from '../shared/domain/api-key.js';
import type { KeyGrant, Limits } from '../shared/domain/tenant.js';
import type { KeyStore } from '../shared/ports.js';

/** A freshly issued key: the secret is shown here once and never again. */
export interface IssuedKey {
  tenant_id: string;
  api_key: string;
  key_id: string;
}

/** Issues a new API key for a tenant, storing only its hash. */
export async function issueKey(
  keys: KeyStore,
  tenantId: string,
  perKey: { rate?: number | null; burst?: number | null } & KeyGrant = {},
): Promise<IssuedKey> {
  const apiKey = generateApiKey();
  const info = await keys.createKey(tenantId, { keyId: generateKeyId(), keyHash: hashApiKey(apiKey), ...perKey });
  return { tenant_id: tenantId, api_key: apiKey, key_id: info.key_id };
}

/** Creates a tenant and its first key. */
export async function createTenantWithKey(keys: KeyStore, name: string, limits: Limits): Promise<IssuedKey> {
  const tenant = await keys.createTenant({ name, limits });
  return issueKey(keys, tenant.tenant_id);
}
