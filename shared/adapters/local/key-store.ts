import { v7 as uuidv7 } from 'uuid';
import { scopesOf, type ApiKeyInfo, type KeyGrant, type Limits, type Tenant } from '../../domain/tenant.js';
import type { KeyLookup, KeyStore, NewTenant } from '../../ports.js';
import type { Statement } from 'better-sqlite3';
import type { Db } from './database.js';

interface TenantRow {
  id: string;
  name: string;
  record_quota: number;
  query_quota: number;
  rate: number;
  burst: number;
  created_at: string;
}

interface KeyRow {
  id: string;
  tenant_id: string;
  rate: number | null;
  burst: number | null;
  status: 'active' | 'revoked';
  scopes: string;
  agent_id: string | null;
  expires_at: string | null;
  last_used_on: string | null;
  created_at: string;
  revoked_at: string | null;
}

function toTenant(row: TenantRow): Tenant {
  return {
    tenant_id: row.id,
    name: row.name,
    limits: { recordQuota: row.record_quota, queryQuota: row.query_quota, rate: row.rate, burst: row.burst },
    created_at: row.created_at,
  };
}

function toKey(row: KeyRow): ApiKeyInfo {
  return {
    key_id: row.id,
    tenant_id: row.tenant_id,
    status: row.status,
    scopes: scopesOf(row.scopes),
    agent_id: row.agent_id,
    expires_at: row.expires_at,
    last_used_on: row.last_used_on,
    rate: row.rate,
    burst: row.burst,
    created_at: row.created_at,
    revoked_at: row.revoked_at,
  };
}

const KEY_COLUMNS = 'id, tenant_id, rate, burst, status, scopes, agent_id, expires_at, last_used_on, created_at, revoked_at';

/** Tenants and API keys on SQLite. Keys are stored as SHA-256 hashes only. */
export class SqliteKeyStore implements KeyStore {
  private readonly generation: Statement;

  constructor(private readonly db: Db, private readonly now: () => Date = () => new Date()) {
    this.generation = db.prepare('SELECT generation FROM auth_changes').pluck();
  }

  /**
   * A count that moves with every change to what an authorization of a key says (a key revoked, ended,
   * changed or deleted; a tenant's limits changed, or the tenant deleted), whichever process made it: the
   * database's triggers move it (database.ts, the migration of `auth_changes`). The local gateway reuses a
   * cached authorization only while it stands.
   */
  authGeneration(): number {
    return this.generation.get() as number;
  }

  async createTenant({ name, limits }: NewTenant): Promise<Tenant> {
    const at = this.now();
    const row: TenantRow = {
      id: uuidv7({ msecs: at.getTime() }),
      name,
      record_quota: limits.recordQuota,
      query_quota: limits.queryQuota,
      rate: limits.rate,
      burst: limits.burst,
      created_at: at.toISOString(),
    };
    this.db
      .prepare(
        `INSERT INTO tenants (id, name, record_quota, query_quota, rate, burst, created_at)
         VALUES (@id, @name, @record_quota, @query_quota, @rate, @burst, @created_at)`,
      )
      .run(row);
    return toTenant(row);
  }

  async getTenant(tenantId: string): Promise<Tenant | null> {
    const row = this.db.prepare<[string], TenantRow>('SELECT * FROM tenants WHERE id = ?').get(tenantId);
    return row ? toTenant(row) : null;
  }

  async listTenants(): Promise<Tenant[]> {
    return this.db.prepare<[], TenantRow>('SELECT * FROM tenants ORDER BY created_at, rowid').all().map(toTenant);
  }

  async createKey(
    tenantId: string,
    key: { keyId: string; keyHash: string; rate?: number | null; burst?: number | null } & KeyGrant,
  ): Promise<ApiKeyInfo> {
    const row: KeyRow = {
      id: key.keyId,
      tenant_id: tenantId,
      rate: key.rate ?? null,
      burst: key.burst ?? null,
      status: 'active',
      scopes: scopesOf(key.scopes).join(','),
      agent_id: key.agentId ?? null,
      expires_at: key.expiresAt ?? null,
      last_used_on: null,
      created_at: this.now().toISOString(),
      revoked_at: null,
    };
    this.db
      .prepare(
        `INSERT INTO api_keys (id, tenant_id, key_hash, rate, burst, status, scopes, agent_id, expires_at, created_at)
         VALUES (@id, @tenant_id, @key_hash, @rate, @burst, @status, @scopes, @agent_id, @expires_at, @created_at)`,
      )
      .run({ ...row, key_hash: key.keyHash, revoked_at: undefined });
    return toKey(row);
  }

  async listKeys(tenantId: string): Promise<ApiKeyInfo[]> {
    return this.db
      .prepare<[string], KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE tenant_id = ? ORDER BY created_at, rowid`)
      .all(tenantId)
      .map(toKey);
  }

  async findByHash(keyHash: string): Promise<KeyLookup | null> {
    const key = this.db
      .prepare<[string], KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE key_hash = ?`)
      .get(keyHash);
    if (!key) return null;
    const tenant = await this.getTenant(key.tenant_id);
    return tenant ? { key: toKey(key), tenant } : null;
  }

  async markUsed(key: Pick<ApiKeyInfo, 'tenant_id' | 'key_id'>, day: string): Promise<void> {
    this.db
      .prepare('UPDATE api_keys SET last_used_on = ? WHERE id = ? AND tenant_id = ? AND (last_used_on IS NULL OR last_used_on < ?)')
      .run(day, key.key_id, key.tenant_id, day);
  }

  async updateTenant(tenantId: string, changes: { name?: string; limits?: Partial<Limits> }): Promise<Tenant | null> {
    const current = await this.getTenant(tenantId);
    if (!current) return null;
    const limits = { ...current.limits, ...changes.limits };
    this.db
      .prepare('UPDATE tenants SET name = ?, record_quota = ?, query_quota = ?, rate = ?, burst = ? WHERE id = ?')
      .run(changes.name ?? current.name, limits.recordQuota, limits.queryQuota, limits.rate, limits.burst, tenantId);
    return this.getTenant(tenantId);
  }

  async deleteTenant(tenantId: string): Promise<{ keys: number } | null> {
    return this.db.transaction(() => {
      const keys = this.db.prepare('DELETE FROM api_keys WHERE tenant_id = ?').run(tenantId).changes;
      return this.db.prepare('DELETE FROM tenants WHERE id = ?').run(tenantId).changes === 1 ? { keys } : null;
    })();
  }

  async revoke(ref: { keyId: string } | { keyHash: string }): Promise<ApiKeyInfo | null> {
    const [column, value] = 'keyId' in ref ? ['id', ref.keyId] : ['key_hash', ref.keyHash];
    const row = this.db
      .prepare<[string, string], KeyRow>(
        `UPDATE api_keys SET status = 'revoked', revoked_at = coalesce(revoked_at, ?)
         WHERE ${column} = ? RETURNING ${KEY_COLUMNS}`,
      )
      .get(this.now().toISOString(), value);
    return row ? toKey(row) : null;
  }
}
