/** The quotas and rate limits that apply to a tenant's requests. */
export interface Limits {
  /** Records a tenant may store per UTC month. */
  recordQuota: number;
  /** Searches a tenant may run per UTC month. */
  queryQuota: number;
  /** Sustained requests per second for one API key (token bucket refill rate). */
  rate: number;
  /** Requests one API key may make at once (token bucket size). */
  burst: number;
}

export interface Tenant {
  tenant_id: string;
  name: string;
  limits: Limits;
  created_at: string;
}

/** What a key may do: `read` (search, get, list, usage, classify), `write` (create records), `delete` (delete and forget). */
export const SCOPES = ['read', 'write', 'delete'] as const;
export type Scope = (typeof SCOPES)[number];

/** The options of a new key beyond its limits: fewer scopes, one agent, an end. */
export interface KeyGrant {
  /** Every scope unless fewer are given. */
  scopes?: readonly Scope[] | undefined;
  /** The one agent the key reads and writes for; null or absent: every agent. */
  agentId?: string | null | undefined;
  /** ISO 8601, UTC: from then on the key answers 401. Null or absent: never. */
  expiresAt?: string | null | undefined;
}

export interface ApiKeyInfo {
  key_id: string;
  tenant_id: string;
  status: 'active' | 'revoked';
  scopes: Scope[];
  agent_id: string | null;
  expires_at: string | null;
  /** The last UTC day (YYYY-MM-DD) the key was used on, or null: recorded at most once a day. */
  last_used_on: string | null;
  /** Per-key rate limits; null means the tenant's. */
  rate: number | null;
  burst: number | null;
  created_at: string;
  revoked_at: string | null;
}

/** Who a request acts for, as the authorizer establishes it. */
export interface Principal {
  tenantId: string;
  keyId: string;
  limits: Limits;
  scopes: readonly Scope[];
  /** The agent the key is bound to, or null. */
  agentId: string | null;
  /** When the key ends (ISO 8601), or null. */
  expiresAt: string | null;
}

/** The scopes of a key as stored (a comma list), every scope when none was stored. */
export function scopesOf(stored: string | readonly string[] | null | undefined): Scope[] {
  const list = typeof stored === 'string' ? stored.split(',') : (stored ?? SCOPES);
  return SCOPES.filter((scope) => list.includes(scope));
}

/** True when the key's end has come. */
export function expired(key: Pick<ApiKeyInfo, 'expires_at'>, now: Date): boolean {
  return key.expires_at !== null && Date.parse(key.expires_at) <= now.getTime();
}

/** Monthly usage of one tenant. */
export interface Usage {
  tenant_id: string;
  month: string;
  records: number;
  queries: number;
}
