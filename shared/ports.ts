import type { IdempotencyClaim } from './domain/idempotency.js';
import type { ListRequest } from './domain/listing.js';
import type { ParsedQuery } from './domain/query-parse.js';
import type { RecordPatch } from './domain/schemas.js';
import type { Classification, RecordReceipt, RecordType, SearchHit, StoredRecord } from './domain/record.js';
import type { ApiKeyInfo, KeyGrant, Limits, Principal, Tenant, Usage } from './domain/tenant.js';

/**
 * The ports: what the handlers need from the outside world. Every method takes the tenant first, from
 * the authenticated principal only, and no method ever returns another tenant's data.
 */

/** Options of an atomic record write. */
export interface CreateRecordOptions {
  /** The tenant's monthly record quota; the store checks and counts it in the same step as the write. */
  recordQuota: number;
  /** The quota month (`YYYY-MM`, UTC) the write counts against. */
  month: string;
  /** When present, a second write under the same key replays the first instead of storing again. */
  idempotency?: IdempotencyClaim;
  /**
   * Records the new one supersedes (ids as the stores keep them, no repeats): each gets `superseded_by` set to
   * the new id in the same atomic step as the write. One that the tenant does not have (unknown, deleted,
   * hidden by a forget job), or, with `agentId`, that another agent wrote, is AppError `not_found` naming its
   * id, and nothing is stored. A replayed write supersedes nothing.
   */
  supersedes?: { ids: readonly string[]; agentId: string | null };
}

/** What a PATCH changes, and under which condition. */
export interface UpdateRecordOptions {
  /** When given, the update applies only if the record's version is one of these (If-Match); otherwise AppError `version_conflict`. */
  ifVersions?: readonly number[] | undefined;
  /** When the update is made: its `updated_at`. */
  at: Date;
}

/** The result of a record write. */
export interface CreateRecordResult {
  receipt: RecordReceipt;
  /** True when an earlier write with the same idempotency key answered, and nothing new was stored. */
  replayed: boolean;
}

/** What a delete answers. */
export interface DeletedRecord {
  id: string;
  /** ISO 8601, UTC, when the delete was applied. */
  deleted_at: string;
}

/** What a forget deletes: the records that match every selector given. */
export interface ForgetSelectors {
  agent_id?: string | undefined;
  client?: string | undefined;
  type?: RecordType | undefined;
  /** ISO 8601 instant, UTC: records created before it. */
  before?: string | undefined;
  ids?: string[] | undefined;
}

/** How a forget went: finished within the call, or handed to a job that hides what it matched until it is done. */
export type ForgetOutcome =
  | { kind: 'done'; matched: number; deleted: number }
  | { kind: 'job'; job_id: string; matched: number };

/** A forget job, as `GET /api/v1/forget/{job_id}` reports it. */
export interface ForgetJobStatus {
  status: 'running' | 'done' | 'failed';
  matched: number;
  deleted: number;
}

/** What the AWS forget worker needs of the record store: the steps of a forget job that answered 202. */
export interface ForgetJobRunner {
  /**
   * Deletes what the job matches, counting as it goes, and marks it done; safe to run again on the same job.
   * `stop`, asked after each page, ends the step early with an error. Null when the tenant has no such job.
   */
  runForgetJob(tenantId: string, jobId: string, options?: { stop?: () => boolean }): Promise<ForgetJobStatus | null>;
  /** Marks a job failed, with why; the records it hid come back. */
  failForgetJob(tenantId: string, jobId: string, error: string): Promise<void>;
}

/** What an import did: records stored, and records skipped because their id exists already. */
export interface ImportResult {
  imported: number;
  /** Records whose id the tenant holds already. */
  skipped: number;
}

/** What erasing a tenant's data removed, by kind. */
export type ErasedCounts = Record<string, number>;

export interface RecordStore {
  /**
   * Stores a record durably, counts it against the monthly quota and queues its classification, all in
   * one atomic step. Throws AppError `record_quota_exceeded` when the quota is used up, and
   * `idempotency_key_reused` when the key was used within 24 h for a different request.
   */
  create(tenantId: string, record: StoredRecord, options: CreateRecordOptions): Promise<CreateRecordResult>;
  /** Returns the tenant's record with this id, or null. */
  get(tenantId: string, id: string): Promise<StoredRecord | null>;
  /**
   * Changes the fields the patch names (patchedRecord: one version more, `updated_at` set) in one atomic step,
   * with its search index entry where the backend holds it (SQLite: in the same transaction, so the old words
   * stop matching and the new ones match when this returns; DynamoDB: its stream updates the index), and,
   * when the title or body changed, queues its classification again. Returns the updated record, or null when
   * the tenant has no record with this id. Throws AppError `version_conflict`, changing nothing, when
   * `ifVersions` does not hold the record's version.
   */
  update(tenantId: string, id: string, patch: RecordPatch, options: UpdateRecordOptions): Promise<StoredRecord | null>;
  /**
   * Deletes the tenant's record with this id, durably, with what belongs to it on the backend (SQLite: its
   * search index entries and its pending classification job, in the same transaction; DynamoDB: the item,
   * whose stream then takes the document out of the search index). Returns null, and changes nothing, when
   * the tenant has no record with this id: unknown, already deleted, or another tenant's. Gives no quota back.
   */
  delete(tenantId: string, id: string): Promise<DeletedRecord | null>;
  /**
   * One page of the tenant's records that pass the filters, in the request's order (by `created_at`, then
   * `id`), strictly after `request.after`: at most `request.limit` records. Never a deleted record, nor one a
   * running forget job has matched.
   */
  list(tenantId: string, request: ListRequest): Promise<StoredRecord[]>;
  /**
   * Deletes the tenant's records that match every selector and, unless `selectors.ids` names them, were
   * created before `at` (so records written after the forget answered are never touched; a named record is
   * taken whatever its created_at, which an import may set after today), or with `dryRun` counts them. A
   * backend that cannot finish within one request starts a job instead, which hides what it matched from
   * every read from then on.
   */
  forget(tenantId: string, selectors: ForgetSelectors, options: { dryRun: boolean; at: Date }): Promise<ForgetOutcome>;
  /** The tenant's forget job, or null when it has none with this id (and always on a backend without jobs). */
  forgetJob(tenantId: string, jobId: string): Promise<ForgetJobStatus | null>;
  /**
   * Stores records as an export gave them, keeping `id`, `created_at` and `classification`, without counting
   * them against any quota; a record whose id the tenant has already is skipped, so an import can run again.
   */
  import(tenantId: string, records: StoredRecord[]): Promise<ImportResult>;
  /**
   * Erases the tenant's data on this store: its records (and their search index entries), its jobs and its
   * idempotency keys, and says how many of each it removed. Usage counters stay, for billing.
   */
  eraseTenant(tenantId: string, progress?: (line: string) => void): Promise<ErasedCounts>;
  /**
   * Attaches a classification suggestion; never changes `type`. With `version`, only while the record still
   * has that version, so that a suggestion for a text an update has replaced never lands (the update queued
   * its own). Returns false when there is no such record, or it has another version.
   */
  setClassification(tenantId: string, id: string, classification: Classification, version?: number): Promise<boolean>;
  /**
   * Resolves when the store answers a read, rejects when it does not (its database closed, unreachable or
   * refusing): what `GET /healthz` reports. It reads no tenant's data.
   */
  ping(): Promise<void>;
}

/** A search, validated. */
export interface SearchQuery {
  /** null: no text, so the newest records come first with rank 0. */
  text: ParsedQuery | null;
  agent_id?: string | null | undefined;
  type?: RecordType | undefined;
  client?: string | null | undefined;
  /** ISO 8601 instant in UTC; keeps records created at or after it. */
  since?: string | undefined;
  /** ISO 8601 instant in UTC; keeps records created before it. */
  until?: string | undefined;
  /** True: superseded records too; otherwise only those whose superseded_by is null. */
  include_superseded?: boolean | undefined;
  /**
   * 0 to 1: hits ranked below it are left out (shared/domain/rank.ts); none when absent. A search without
   * text ranks every record 0, so any value above 0 leaves them all out (decisions.md, as written).
   */
  min_rank?: number | undefined;
  limit: number;
}

export interface SearchIndex {
  /** Returns the tenant's matching records, best first, with a rank that never increases. */
  search(tenantId: string, query: SearchQuery): Promise<SearchHit[]>;
}

/** One change the search index must follow, as the system of record's stream reports it. */
export type IndexChange =
  | { kind: 'upsert'; record: StoredRecord }
  | { kind: 'delete'; tenant_id: string; id: string };

/**
 * The write side of the search index, fed from the DynamoDB stream. Changes are idempotent by record id,
 * so a replayed batch leaves the index as it was.
 */
export interface DocumentIndex {
  /** Applies the changes in order; one entry per change: null when applied, or why it failed. */
  apply(changes: IndexChange[]): Promise<(string | null)[]>;
}

/** A stored key, as the authorizer sees it. */
export interface KeyLookup {
  key: ApiKeyInfo;
  tenant: Tenant;
}

export interface NewTenant {
  name: string;
  limits: Limits;
}

export interface KeyStore {
  /** Creates a tenant with its limits. */
  createTenant(tenant: NewTenant): Promise<Tenant>;
  /** Returns the tenant, or null. */
  getTenant(tenantId: string): Promise<Tenant | null>;
  /** Lists every tenant, oldest first. */
  listTenants(): Promise<Tenant[]>;
  /** Stores a new key for a tenant by its hash; per-key rate limits, fewer scopes, an agent and an end are optional. */
  createKey(
    tenantId: string,
    key: { keyId: string; keyHash: string; rate?: number | null; burst?: number | null } & KeyGrant,
  ): Promise<ApiKeyInfo>;
  /** Lists a tenant's keys, oldest first, revoked ones included. */
  listKeys(tenantId: string): Promise<ApiKeyInfo[]>;
  /** Finds a key by the hash of the secret, active or revoked, with its tenant; null when unknown. */
  findByHash(keyHash: string): Promise<KeyLookup | null>;
  /** Revokes a key, found by its id or by the hash of its secret. Returns the key, or null when unknown. */
  revoke(ref: { keyId: string } | { keyHash: string }): Promise<ApiKeyInfo | null>;
  /**
   * Records that the key was used on `day` (YYYY-MM-DD, UTC), unless it already was that day or later: the
   * authorizer calls it when the key's stored day is older, so a key costs at most one write a day.
   */
  markUsed(key: Pick<ApiKeyInfo, 'tenant_id' | 'key_id'>, day: string): Promise<void>;
  /** Changes a tenant's limits; returns the tenant as it is now, or null when there is no such tenant. */
  updateTenant(tenantId: string, changes: { name?: string; limits?: Partial<Limits> }): Promise<Tenant | null>;
  /** Deletes a tenant and its keys (every lookup of them); returns how many keys went, or null when unknown. */
  deleteTenant(tenantId: string): Promise<{ keys: number } | null>;
}

export interface UsageMeter {
  /**
   * Counts one search against the tenant's monthly query quota, if the quota allows it, in one atomic
   * step. Returns false, and counts nothing, when the quota is used up.
   */
  countQuery(tenantId: string, month: string, queryQuota: number): Promise<boolean>;
  /** Usage for one month, for one tenant or all of them. Tenants with no usage that month are left out. */
  list(month: string, tenantId?: string): Promise<Usage[]>;
}

/** A request to classify one stored record. */
export interface ClassificationJob {
  tenant_id: string;
  record_id: string;
}

/** A job handed to a worker, with the handle it acknowledges it by. */
export interface ClaimedJob extends ClassificationJob {
  jobId: string;
  attempts: number;
}

/**
 * Where new classification jobs go: SQS on AWS, the SQLite outbox locally. The result has one entry per
 * job, in order: null when the job is queued durably, or why it was not, so a caller can retry just those.
 */
export interface JobSink {
  enqueue(jobs: ClassificationJob[]): Promise<(string | null)[]>;
}

export interface JobQueue extends JobSink {
  /** Leases up to `max` ready jobs for `leaseMs`; a job not completed or retried in time comes back. */
  claim(max: number, leaseMs: number): Promise<ClaimedJob[]>;
  /** Removes finished jobs. */
  complete(jobIds: string[]): Promise<void>;
  /** Puts a failed job back after `delayMs`, or parks it as dead once it has had `maxAttempts`. */
  retry(jobId: string, error: string, delayMs: number, maxAttempts: number): Promise<void>;
}

/** A suggested type with a confidence and a score per type, each in 0..1. */
export interface Suggestion {
  type: RecordType;
  confidence: number;
  scores: Record<RecordType, number>;
  model: string;
}

export interface Classifier {
  /** Suggests a type for a title and a body. */
  classify(input: { title: string; body: string }): Promise<Suggestion>;
}

export type { Principal };
