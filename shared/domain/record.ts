import { v7 as uuidv7 } from 'uuid';
import type { z } from 'zod';
import {
  CLASSIFICATION_FIELDS,
  NULLABLE_FIELDS,
  RECORD_FIELDS,
  SEARCH_HIT_FIELDS,
  STORED_FIELDS,
  type classificationSchema,
  type recordSchema,
  type searchHitSchema,
  type StoredField,
  type storedRecordSchema,
} from './record-schema.js';
import { PATCH_FIELDS, type RecordPatch, type recordInputSchema, type recordReceiptSchema } from './schemas.js';
import { AppError } from './errors.js';
import { utf8Bytes } from './text.js';

export { LIMITS } from './limits.js';
export { RECORD_TYPES, type RecordType } from './record-schema.js';

/** The asynchronous type suggestion attached to a stored record. */
export type Classification = z.output<typeof classificationSchema>;

/** A record as a caller writes it, after validation. */
export type RecordInput = z.output<typeof recordInputSchema>;

/** A record as it is stored: the caller's fields plus what the service assigns. */
export type StoredRecord = z.output<typeof storedRecordSchema>;

/** One search result: the stored record and its relevance in 0..1. */
export type SearchHit = StoredRecord & Pick<PublicSearchHit, 'rank'>;

/** A record as the API answers it (get, list, export). */
export type PublicRecord = z.output<typeof recordSchema>;

/** A search result as the API answers it. */
export type PublicSearchHit = z.output<typeof searchHitSchema>;

/** What a 201 answers: the id, the creation time and the tenant. */
export type RecordReceipt = z.output<typeof recordReceiptSchema>;

/** The named fields of `source`, in the order named: the order the API documents. */
function pick<T, K extends keyof T>(source: T, fields: readonly K[]): Pick<T, K> {
  const picked = {} as Pick<T, K>;
  for (const field of fields) picked[field] = source[field];
  return picked;
}

/** Assigns the id (UUIDv7, from the same millisecond as created_at) and the creation time to a new record. */
export function newRecord(tenantId: string, input: RecordInput, at: Date): StoredRecord {
  return {
    id: uuidv7({ msecs: at.getTime() }),
    tenant_id: tenantId,
    agent_id: input.agent_id,
    type: input.type,
    title: input.title,
    body: input.body,
    client: input.client ?? null,
    created_at: at.toISOString(),
    metadata: input.metadata ?? null,
    classification: null,
    version: 1,
    updated_at: null,
    superseded_by: null,
  };
}

/**
 * The record with a PATCH applied: the fields the patch names (a null client or metadata removes it), one
 * version more, and `updated_at` set. Its classification is kept until the worker suggests one for the new text.
 */
export function patchedRecord(record: StoredRecord, patch: RecordPatch, at: Date): StoredRecord {
  const changed: Partial<StoredRecord> = {};
  for (const field of PATCH_FIELDS) if (patch[field] !== undefined) Object.assign(changed, { [field]: patch[field] });
  return { ...record, ...changed, version: record.version + 1, updated_at: at.toISOString() };
}

/** Whether a PATCH changes the text the classifier reads (title or body), so that it should suggest a type again. */
export function changesText(record: StoredRecord, patch: RecordPatch): boolean {
  return (patch.title !== undefined && patch.title !== record.title) || (patch.body !== undefined && patch.body !== record.body);
}

/** A record as the API answers it (get, list, export): the documented fields in the documented order, without the tenant. */
export function publicRecord(record: StoredRecord): PublicRecord {
  return pick(record, RECORD_FIELDS);
}

/** A search result as the API answers it: the documented fields in the documented order, without the tenant. */
export function publicHit(hit: SearchHit): PublicSearchHit {
  return pick(hit, SEARCH_HIT_FIELDS);
}

/** The one answer for an id that is unknown, malformed, deleted or another tenant's, so that no id's existence leaks. */
export const recordNotFound = () => new AppError('not_found', 'No record with this id');

/** A record id as the service makes them: a UUIDv7 in lowercase hex. */
const RECORD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * The record id a caller named, in the form the stores keep (UUIDs compare case-insensitively), or null when
 * it cannot be one; a malformed id then answers as an unknown one does (404), so it never costs a read.
 */
export function recordIdOf(raw: string): string | null {
  const id = raw.toLowerCase();
  return RECORD_ID.test(id) ? id : null;
}

/** The millisecond a UUIDv7 was made in: its first 48 bits. */
export function idMillis(id: string): number {
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

/** The receipt of a stored record. */
export function receiptOf(record: Pick<StoredRecord, 'id' | 'created_at' | 'tenant_id'>): RecordReceipt {
  return { id: record.id, created_at: record.created_at, tenant_id: record.tenant_id };
}

/** The bytes a record's own text takes (UTF-8 of its strings and of its metadata's JSON): what finance bills as storage. */
export function recordBytes(record: Pick<StoredRecord, 'agent_id' | 'title' | 'body' | 'client' | 'metadata'>): number {
  return (
    utf8Bytes(record.agent_id) +
    utf8Bytes(record.title) +
    utf8Bytes(record.body) +
    (record.client === null ? 0 : utf8Bytes(record.client)) +
    (record.metadata === null ? 0 : utf8Bytes(JSON.stringify(record.metadata)))
  );
}

/** A stored record with its metadata as JSON text: how a store keeps it when it cannot hold any JSON value. */
export type SerializedRecord = Omit<StoredRecord, 'metadata'> & { metadata: string | null };

/** The record with its metadata as JSON text, so any JSON object round-trips exactly, however deep. */
export function serializeRecord(record: StoredRecord): SerializedRecord {
  return { ...pick(record, STORED_FIELDS), metadata: record.metadata === null ? null : JSON.stringify(record.metadata) };
}

/** The record back from its serialized form; absent optional fields read as null, fields in order. */
export function deserializeRecord(stored: SerializedRecord): StoredRecord {
  const record = {} as Record<StoredField, unknown>;
  for (const field of STORED_FIELDS) record[field] = NULLABLE_FIELDS.has(field) ? (stored[field] ?? null) : stored[field];
  record.metadata = typeof stored.metadata === 'string' ? (JSON.parse(stored.metadata) as Record<string, unknown>) : null;
  const c = stored.classification ?? null;
  record.classification = c === null ? null : pick(c, CLASSIFICATION_FIELDS);
  return record as StoredRecord;
}
