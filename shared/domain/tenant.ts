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

export interface ApiKeyInfo {
  key_id: string;
  tenant_id: string;
  status: 'active' | 'revoked';
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
}

/** Monthly usage of one tenant. */
export interface Usage {
  tenant_id: string;
  month: string;
  records: number;
  queries: number;
}
