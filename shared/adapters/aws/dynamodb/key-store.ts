import {
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { v7 as uuidv7 } from 'uuid';
import { scopesOf, type ApiKeyInfo, type KeyGrant, type Limits, type Tenant } from '../../../domain/tenant.js';
import type { KeyLookup, KeyStore, NewTenant } from '../../../ports.js';
import { scanAll } from './scan.js';
import { batchDelete, conditionFailed, transactWrite } from './transact.js';

/**
 * The tenants table holds four kinds of item, told apart by the sort key:
 *
 *   pk tenant#<tenant_id>  sk tenant         the tenant: name, limits
 *   pk tenant#<tenant_id>  sk key#<key_id>   a key: its status and limits (the one place status lives)
 *   pk hash#<sha256>       sk hash           lookup by the hash of the secret (what the authorizer has)
 *   pk keyid#<key_id>      sk keyid          lookup by key id (what `key revoke` is given)
 *
 * Every read is a strongly consistent GetItem or Query on the base table, so a new key works and a
 * revoked key stops at once, with no index lag. The secret itself is never stored.
 */
interface TenantItem {
  pk: string;
  sk: 'tenant';
  tenant_id: string;
  name: string;
  record_quota: number;
  query_quota: number;
  rate: number;
  burst: number;
  created_at: string;
}

interface KeyItem {
  pk: string;
  sk: string;
  key_id: string;
  tenant_id: string;
  key_hash: string;
  status: 'active' | 'revoked';
  rate: number | null;
  burst: number | null;
  /** A comma list; absent on the keys made before scopes, which have every scope. */
  scopes?: string;
  agent_id?: string | null;
  expires_at?: string | null;
  /** The last UTC day the key was used on; absent until it is. */
  last_used_on?: string;
  created_at: string;
  /** Absent until the key is revoked, so `if_not_exists` keeps the first revocation time. */
  revoked_at?: string;
}

interface PointerItem {
  tenant_id: string;
  key_id: string;
}

const tenantKey = (tenantId: string) => ({ pk: `tenant#${tenantId}`, sk: 'tenant' });
const keyKey = (tenantId: string, keyId: string) => ({ pk: `tenant#${tenantId}`, sk: `key#${keyId}` });
const hashKey = (keyHash: string) => ({ pk: `hash#${keyHash}`, sk: 'hash' });
const keyIdKey = (keyId: string) => ({ pk: `keyid#${keyId}`, sk: 'keyid' });

function toTenant(item: TenantItem): Tenant {
  return {
    tenant_id: item.tenant_id,
    name: item.name,
    limits: { recordQuota: item.record_quota, queryQuota: item.query_quota, rate: item.rate, burst: item.burst },
    created_at: item.created_at,
  };
}

function toKey(item: KeyItem): ApiKeyInfo {
  return {
    key_id: item.key_id,
    tenant_id: item.tenant_id,
    status: item.status,
    scopes: scopesOf(item.scopes),
    agent_id: item.agent_id ?? null,
    expires_at: item.expires_at ?? null,
    last_used_on: item.last_used_on ?? null,
    rate: item.rate ?? null,
    burst: item.burst ?? null,
    created_at: item.created_at,
    revoked_at: item.revoked_at ?? null,
  };
}

const byAge = <T extends { created_at: string }>(id: (x: T) => string) => (a: T, b: T) =>
  a.created_at.localeCompare(b.created_at) || id(a).localeCompare(id(b));

/** Tenants and API keys on DynamoDB; see the item layout above. */
export class DynamoDbKeyStore implements KeyStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async createTenant({ name, limits }: NewTenant): Promise<Tenant> {
    const at = this.now();
    const tenantId = uuidv7({ msecs: at.getTime() });
    const item: TenantItem = {
      ...tenantKey(tenantId),
      sk: 'tenant',
      tenant_id: tenantId,
      name,
      record_quota: limits.recordQuota,
      query_quota: limits.queryQuota,
      rate: limits.rate,
      burst: limits.burst,
      created_at: at.toISOString(),
    };
    await this.db.send(new PutCommand({ TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
    return toTenant(item);
  }

  async getTenant(tenantId: string): Promise<Tenant | null> {
    const item = await this.get<TenantItem>(tenantKey(tenantId));
    return item ? toTenant(item) : null;
  }

  /** A scan: tenants are few, and only the admin CLI lists them. */
  async listTenants(): Promise<Tenant[]> {
    const items = await scanAll<TenantItem>(this.db, {
      TableName: this.table,
      FilterExpression: 'sk = :tenant',
      ExpressionAttributeValues: { ':tenant': 'tenant' },
    });
    return items.map(toTenant).sort(byAge((t) => t.tenant_id));
  }

  async createKey(
    tenantId: string,
    key: { keyId: string; keyHash: string; rate?: number | null; burst?: number | null } & KeyGrant,
  ): Promise<ApiKeyInfo> {
    const item: KeyItem = {
      ...keyKey(tenantId, key.keyId),
      key_id: key.keyId,
      tenant_id: tenantId,
      key_hash: key.keyHash,
      status: 'active',
      rate: key.rate ?? null,
      burst: key.burst ?? null,
      scopes: scopesOf(key.scopes).join(','),
      agent_id: key.agentId ?? null,
      expires_at: key.expiresAt ?? null,
      created_at: this.now().toISOString(),
    };
    const pointer: PointerItem = { tenant_id: tenantId, key_id: key.keyId };
    const isNew = 'attribute_not_exists(pk)';
    const outcome = await transactWrite(this.db, {
      TransactItems: [
        { ConditionCheck: { TableName: this.table, Key: tenantKey(tenantId), ConditionExpression: 'attribute_exists(pk)' } },
        { Put: { TableName: this.table, Item: item, ConditionExpression: isNew } },
        { Put: { TableName: this.table, Item: { ...hashKey(key.keyHash), ...pointer }, ConditionExpression: isNew } },
        { Put: { TableName: this.table, Item: { ...keyIdKey(key.keyId), ...pointer }, ConditionExpression: isNew } },
      ],
    });
    if (!outcome.committed) {
      const [tenant] = outcome.reasons;
      throw new Error(
        tenant?.Code === 'ConditionalCheckFailed' ? `no tenant ${tenantId}` : 'a key with this id or secret already exists',
      );
    }
    return toKey(item);
  }

  async listKeys(tenantId: string): Promise<ApiKeyInfo[]> {
    const items: KeyItem[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :key)',
          ExpressionAttributeValues: { ':pk': tenantKey(tenantId).pk, ':key': 'key#' },
          ConsistentRead: true,
          ExclusiveStartKey,
        }),
      );
      items.push(...((page.Items ?? []) as KeyItem[]));
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    return items.map(toKey).sort(byAge((k) => k.key_id));
  }

  /** Two round trips: the hash pointer, then the key and its tenant side by side. */
  async findByHash(keyHash: string): Promise<KeyLookup | null> {
    const pointer = await this.get<PointerItem>(hashKey(keyHash));
    if (!pointer) return null;
    const [key, tenant] = await Promise.all([
      this.get<KeyItem>(keyKey(pointer.tenant_id, pointer.key_id)),
      this.get<TenantItem>(tenantKey(pointer.tenant_id)),
    ]);
    return key && tenant ? { key: toKey(key), tenant: toTenant(tenant) } : null;
  }

  /** Revoking a revoked key keeps its first revocation time, as on SQLite. */
  async revoke(ref: { keyId: string } | { keyHash: string }): Promise<ApiKeyInfo | null> {
    const pointer = await this.get<PointerItem>('keyId' in ref ? keyIdKey(ref.keyId) : hashKey(ref.keyHash));
    if (!pointer) return null;
    try {
      const { Attributes } = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: keyKey(pointer.tenant_id, pointer.key_id),
          UpdateExpression: 'SET #status = :revoked, revoked_at = if_not_exists(revoked_at, :now)',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':revoked': 'revoked', ':now': this.now().toISOString() },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return toKey(Attributes as KeyItem);
    } catch (error) {
      if (conditionFailed(error)) return null;
      throw error;
    }
  }

  async markUsed(key: Pick<ApiKeyInfo, 'tenant_id' | 'key_id'>, day: string): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: keyKey(key.tenant_id, key.key_id),
          UpdateExpression: 'SET last_used_on = :day',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(last_used_on) OR last_used_on < :day)',
          ExpressionAttributeValues: { ':day': day },
        }),
      );
    } catch (error) {
      // Another authorizer run recorded the day first, or the key is gone: nothing to do.
      if (!conditionFailed(error)) throw error;
    }
  }

  async updateTenant(tenantId: string, changes: { name?: string; limits?: Partial<Limits> }): Promise<Tenant | null> {
    const fields: Record<string, unknown> = {
      name: changes.name,
      record_quota: changes.limits?.recordQuota,
      query_quota: changes.limits?.queryQuota,
      rate: changes.limits?.rate,
      burst: changes.limits?.burst,
    };
    const set = Object.entries(fields).filter(([, value]) => value !== undefined);
    if (set.length === 0) return this.getTenant(tenantId);
    try {
      const { Attributes } = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: tenantKey(tenantId),
          UpdateExpression: `SET ${set.map(([name]) => `#${name} = :${name}`).join(', ')}`,
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: Object.fromEntries(set.map(([name]) => [`#${name}`, name])),
          ExpressionAttributeValues: Object.fromEntries(set.map(([name, value]) => [`:${name}`, value])),
          ReturnValues: 'ALL_NEW',
        }),
      );
      return toTenant(Attributes as TenantItem);
    } catch (error) {
      if (conditionFailed(error)) return null;
      throw error;
    }
  }

  /** Deletes every item of the tenant's partition (the tenant, its keys, its forget jobs) and the keys' lookups. */
  async deleteTenant(tenantId: string): Promise<{ keys: number } | null> {
    if (!(await this.getTenant(tenantId))) return null;
    const items: { pk: string; sk: string; key_hash?: string; key_id?: string }[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': tenantKey(tenantId).pk },
          ConsistentRead: true,
          ExclusiveStartKey,
        }),
      );
      items.push(...((page.Items ?? []) as typeof items));
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    const keys = items.filter((item) => item.sk.startsWith('key#'));
    // The lookups first: once they are gone no request can find the keys, whatever happens after.
    const lookups = keys.flatMap((k) => [hashKey(k.key_hash!), keyIdKey(k.key_id!)]);
    // The tenant item last, so that a delete cut short can be run again and finds the tenant.
    const own = items.filter((item) => item.sk !== 'tenant').map(({ pk, sk }) => ({ pk, sk }));
    for (const batch of [lookups, own, [tenantKey(tenantId)]]) await batchDelete(this.db, this.table, batch);
    return { keys: keys.length };
  }

  private async get<T>(key: Record<string, string>): Promise<T | null> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.table, Key: key, ConsistentRead: true }));
    return (Item as T | undefined) ?? null;
  }
}
