/**
 * In-memory fakes of the ports, for timing the handlers' own compute: every method answers at once from a
 * Map, and counts its calls so a benchmark can check that its requests reached the ports. They keep the
 * promises the port interfaces make where a handler depends on them (quota, idempotency, tenant scoping),
 * and nothing more; they are not adapters and the port suite does not run against them. Each implements
 * the part of its port that the timed handlers call.
 */
import { AppError } from '../../shared/domain/errors.js';
import { patchedRecord, receiptOf, type Classification, type RecordReceipt, type SearchHit, type StoredRecord } from '../../shared/domain/record.js';
import type { ApiKeyInfo, Tenant, Usage } from '../../shared/domain/tenant.js';
import type {
  ClassificationJob,
  CreateRecordOptions,
  CreateRecordResult,
  DeletedRecord,
  DocumentIndex,
  IndexChange,
  JobSink,
  KeyLookup,
  KeyStore,
  NewTenant,
  RecordStore,
  SearchIndex,
  SearchQuery,
  UpdateRecordOptions,
  UsageMeter,
} from '../../shared/ports.js';
import type { RecordPatch } from '../../shared/domain/schemas.js';

const key = (tenantId: string, id: string) => `${tenantId}\u0000${id}`;

/** Records in a Map, with the monthly quota and the idempotency keys the real stores keep. */
export class FakeRecordStore implements Pick<RecordStore, 'create' | 'get' | 'update' | 'delete' | 'setClassification'> {
  readonly calls = { create: 0, get: 0, update: 0, delete: 0, setClassification: 0 };
  private readonly records = new Map<string, StoredRecord>();
  private readonly monthly = new Map<string, number>();
  private readonly idempotency = new Map<string, { requestHash: string; receipt: RecordReceipt }>();

  /** Puts records in place as they are, without quota or idempotency: how a benchmark seeds the store. */
  seed(records: StoredRecord[]): void {
    for (const record of records) this.records.set(key(record.tenant_id, record.id), record);
  }

  async create(tenantId: string, record: StoredRecord, options: CreateRecordOptions): Promise<CreateRecordResult> {
    this.calls.create++;
    const claim = options.idempotency && key(tenantId, options.idempotency.key);
    const earlier = claim === undefined ? undefined : this.idempotency.get(claim);
    if (earlier) {
      if (earlier.requestHash !== options.idempotency!.requestHash) {
        throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used for a different request');
      }
      return { receipt: earlier.receipt, replayed: true };
    }
    const month = key(tenantId, options.month);
    const used = this.monthly.get(month) ?? 0;
    if (used >= options.recordQuota) throw new AppError('record_quota_exceeded', 'The monthly record quota is used up');
    this.monthly.set(month, used + 1);
    this.records.set(key(tenantId, record.id), { ...record, tenant_id: tenantId });
    const receipt = receiptOf({ ...record, tenant_id: tenantId });
    if (claim !== undefined) this.idempotency.set(claim, { requestHash: options.idempotency!.requestHash, receipt });
    return { receipt, replayed: false };
  }

  async get(tenantId: string, id: string): Promise<StoredRecord | null> {
    this.calls.get++;
    return this.records.get(key(tenantId, id)) ?? null;
  }

  async update(tenantId: string, id: string, patch: RecordPatch, { ifVersions, at }: UpdateRecordOptions): Promise<StoredRecord | null> {
    this.calls.update++;
    const record = this.records.get(key(tenantId, id));
    if (!record) return null;
    if (ifVersions && !ifVersions.includes(record.version)) throw new AppError('version_conflict', `The record is at version ${record.version}`);
    const updated = patchedRecord(record, patch, at);
    this.records.set(key(tenantId, id), updated);
    return updated;
  }

  async delete(tenantId: string, id: string): Promise<DeletedRecord | null> {
    this.calls.delete++;
    if (!this.records.delete(key(tenantId, id))) return null;
    return { id, deleted_at: new Date().toISOString() };
  }

  async setClassification(tenantId: string, id: string, classification: Classification): Promise<boolean> {
    this.calls.setClassification++;
    const record = this.records.get(key(tenantId, id));
    if (!record) return false;
    this.records.set(key(tenantId, id), { ...record, classification });
    return true;
  }
}

/**
 * Answers every search with the first `limit` of the records it was given for the tenant, whatever the
 * text and filters: matching and ranking are the index's cost, not the handler's, but the handler still
 * shapes and serializes a full page of hits.
 */
export class FakeSearchIndex implements SearchIndex {
  readonly calls = { search: 0 };
  private readonly hits = new Map<string, SearchHit[]>();

  constructor(records: StoredRecord[]) {
    for (const record of records) {
      const list = this.hits.get(record.tenant_id) ?? [];
      list.push({ ...record, rank: 1 / (list.length + 1) });
      this.hits.set(record.tenant_id, list);
    }
  }

  async search(tenantId: string, query: SearchQuery): Promise<SearchHit[]> {
    this.calls.search++;
    return (this.hits.get(tenantId) ?? []).slice(0, query.limit);
  }
}

/** Counts searches per tenant and month against the quota it is given. */
export class FakeUsageMeter implements UsageMeter {
  readonly calls = { countQuery: 0 };
  private readonly queries = new Map<string, number>();

  async countQuery(tenantId: string, month: string, queryQuota: number): Promise<boolean> {
    this.calls.countQuery++;
    const k = key(tenantId, month);
    const used = this.queries.get(k) ?? 0;
    if (used >= queryQuota) return false;
    this.queries.set(k, used + 1);
    return true;
  }

  async list(month: string, tenantId?: string): Promise<Usage[]> {
    return [...this.queries]
      .map(([k, queries]) => {
        const [tenant_id, m] = k.split('\u0000') as [string, string];
        return { tenant_id, month: m, records: 0, queries };
      })
      .filter((u) => u.month === month && (tenantId === undefined || u.tenant_id === tenantId));
  }
}

/** Tenants and keys by hash, as the authorizer reads them. */
export class FakeKeyStore implements Omit<KeyStore, 'updateTenant' | 'deleteTenant'> {
  readonly calls = { findByHash: 0 };
  private readonly tenants = new Map<string, Tenant>();
  /** By the hash of the secret, as the real stores index them. */
  private readonly keys = new Map<string, { info: ApiKeyInfo; hash: string }>();

  async createTenant(tenant: NewTenant): Promise<Tenant> {
    const created: Tenant = { tenant_id: `tenant-${this.tenants.size + 1}`, name: tenant.name, limits: tenant.limits, created_at: new Date().toISOString() };
    this.tenants.set(created.tenant_id, created);
    return created;
  }

  async getTenant(tenantId: string): Promise<Tenant | null> {
    return this.tenants.get(tenantId) ?? null;
  }

  async listTenants(): Promise<Tenant[]> {
    return [...this.tenants.values()];
  }

  async createKey(tenantId: string, k: { keyId: string; keyHash: string; rate?: number | null; burst?: number | null }): Promise<ApiKeyInfo> {
    const info: ApiKeyInfo = {
      key_id: k.keyId,
      tenant_id: tenantId,
      status: 'active',
      scopes: ['read', 'write', 'delete'],
      agent_id: null,
      expires_at: null,
      last_used_on: null,
      rate: k.rate ?? null,
      burst: k.burst ?? null,
      created_at: new Date().toISOString(),
      revoked_at: null,
    };
    this.keys.set(k.keyHash, { info, hash: k.keyHash });
    return info;
  }

  async listKeys(tenantId: string): Promise<ApiKeyInfo[]> {
    return [...this.keys.values()].filter((k) => k.info.tenant_id === tenantId).map((k) => k.info);
  }

  async findByHash(keyHash: string): Promise<KeyLookup | null> {
    this.calls.findByHash++;
    const found = this.keys.get(keyHash);
    const tenant = found && this.tenants.get(found.info.tenant_id);
    return found && tenant ? { key: found.info, tenant } : null;
  }

  async markUsed(key: Pick<ApiKeyInfo, 'tenant_id' | 'key_id'>, day: string): Promise<void> {
    const found = [...this.keys.values()].find((k) => k.info.key_id === key.key_id);
    if (found && (found.info.last_used_on === null || found.info.last_used_on < day)) found.info.last_used_on = day;
  }

  async revoke(ref: { keyId: string } | { keyHash: string }): Promise<ApiKeyInfo | null> {
    const found = [...this.keys.values()].find((k) => ('keyId' in ref ? k.info.key_id === ref.keyId : k.hash === ref.keyHash));
    if (!found) return null;
    found.info = { ...found.info, status: 'revoked', revoked_at: new Date().toISOString() };
    return found.info;
  }
}

/** The search index's write side: keeps the latest version of each record, by tenant and id. */
export class FakeDocumentIndex implements DocumentIndex {
  readonly calls = { apply: 0, changes: 0 };
  private readonly documents = new Map<string, StoredRecord>();

  async apply(changes: IndexChange[]): Promise<(string | null)[]> {
    this.calls.apply++;
    this.calls.changes += changes.length;
    return changes.map((change) => {
      if (change.kind === 'upsert') this.documents.set(key(change.record.tenant_id, change.record.id), change.record);
      else this.documents.delete(key(change.tenant_id, change.id));
      return null;
    });
  }
}

/** Queues classification jobs in an array. */
export class FakeJobSink implements JobSink {
  readonly calls = { enqueue: 0, jobs: 0 };
  readonly jobs: ClassificationJob[] = [];

  async enqueue(jobs: ClassificationJob[]): Promise<(string | null)[]> {
    this.calls.enqueue++;
    this.calls.jobs += jobs.length;
    this.jobs.push(...jobs);
    return jobs.map(() => null);
  }
}
