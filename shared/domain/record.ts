import { v7 as uuidv7 } from 'uuid';
import { utf8Bytes } from './text.js';

/** The six record types, in the order the interface lists them. */
export const RECORD_TYPES = ['fact', 'decision', 'exchange', 'deliverable', 'open_item', 'signal'] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

/** Size limits from decisions.md. Characters are Unicode code points; bytes are UTF-8. */
export const LIMITS = {
  agentIdChars: 256,
  clientChars: 256,
  titleChars: 2048,
  bodyBytes: 65536,
  metadataBytes: 16384,
  /** Levels of nesting in `metadata`, the object itself being level 1 (json-value.ts says why). */
  metadataDepth: 32,
  idempotencyKeyChars: 255,
  requestBytes: 1024 * 1024,
  /** Characters of a request's URL (path and query string): API Gateway's limit for a regional REST API. */
  urlChars: 10240,
  searchLimitMax: 100,
  searchLimitDefault: 20,
  /** How long a search may take before it fails with 503 search_timeout, unless configured otherwise. */
  searchTimeoutMs: 5_000,
} as const;

/** The asynchronous type suggestion attached to a stored record. */
export interface Classification {
  type: RecordType;
  confidence: number;
  model: string;
  classified_at: string;
}

/** A record as a caller writes it, after validation. */
export interface RecordInput {
  agent_id: string;
  type: RecordType;
  title: string;
  body: string;
  client?: string | null | undefined;
  metadata?: Record<string, unknown> | null | undefined;
}

/** A record as it is stored: the caller's fields plus what the service assigns. */
export interface StoredRecord {
  id: string;
  tenant_id: string;
  agent_id: string;
  type: RecordType;
  title: string;
  body: string;
  client: string | null;
  metadata: Record<string, unknown> | null;
  created_at: string;
  classification: Classification | null;
}

/** One search result: the stored record and its relevance in 0..1. */
export interface SearchHit extends StoredRecord {
  rank: number;
}

/** What a 201 answers: the id, the creation time and the tenant. */
export interface RecordReceipt {
  id: string;
  created_at: string;
  tenant_id: string;
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
    metadata: input.metadata ?? null,
    created_at: at.toISOString(),
    classification: null,
  };
}

/** A record as the API answers it (get, list, export): the documented fields in the documented order, without the tenant. */
export function publicRecord(record: StoredRecord) {
  return {
    id: record.id,
    agent_id: record.agent_id,
    type: record.type,
    title: record.title,
    body: record.body,
    client: record.client,
    created_at: record.created_at,
    metadata: record.metadata,
    classification: record.classification,
  };
}

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
  return {
    id: record.id,
    tenant_id: record.tenant_id,
    agent_id: record.agent_id,
    type: record.type,
    title: record.title,
    body: record.body,
    client: record.client,
    metadata: record.metadata === null ? null : JSON.stringify(record.metadata),
    created_at: record.created_at,
    classification: record.classification,
  };
}

/** The record back from its serialized form; absent optional fields read as null, fields in documented order. */
export function deserializeRecord(stored: SerializedRecord): StoredRecord {
  const c = stored.classification ?? null;
  return {
    id: stored.id,
    tenant_id: stored.tenant_id,
    agent_id: stored.agent_id,
    type: stored.type,
    title: stored.title,
    body: stored.body,
    client: stored.client ?? null,
    metadata: typeof stored.metadata === 'string' ? (JSON.parse(stored.metadata) as Record<string, unknown>) : null,
    created_at: stored.created_at,
    classification: c === null ? null : { type: c.type, confidence: c.confidence, model: c.model, classified_at: c.classified_at },
  };
}
