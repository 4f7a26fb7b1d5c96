import type { RecordFilters } from '../../domain/listing.js';
import type { Classification, RecordType, SearchHit, StoredRecord } from '../../domain/record.js';

/**
 * The `seq` of a record being inserted: above every stored record's and above the search index's merge
 * mark. `seq` is a rowid without AUTOINCREMENT, so SQLite alone would give a new record the seq of a deleted
 * newest one, and a seq at or below the mark is neither in the index nor in its tail (search-merge.ts): the
 * record could never be found. Two lookups of the end of a B-tree.
 */
export const NEXT_SEQ_SQL = '(SELECT max(coalesce((SELECT max(seq) FROM records), 0), (SELECT merged_upto FROM search_state)) + 1)';

/** A `records` row as SQLite returns it. */
export interface RecordRow {
  seq: number;
  id: string;
  tenant_id: string;
  agent_id: string;
  type: string;
  title: string;
  body: string;
  client: string | null;
  metadata: string | null;
  created_at: string;
  classification: string | null;
}

/** Turns a row into the domain record. */
export function toStoredRecord(row: RecordRow): StoredRecord {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    agent_id: row.agent_id,
    type: row.type as RecordType,
    title: row.title,
    body: row.body,
    client: row.client,
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as Record<string, unknown>),
    created_at: row.created_at,
    classification: row.classification === null ? null : (JSON.parse(row.classification) as Classification),
  };
}

/**
 * A search result as a flat row of strings and numbers: what crosses from a search thread to the server's
 * thread (search-pool.ts). Metadata stays the JSON text it is stored as until it reaches `toSearchHit`, so
 * the copy between threads never walks a caller's nested value.
 */
export type SearchRow = RecordRow & { rank: number };

/** Turns a search row into the domain search hit. */
export function toSearchHit({ rank, ...row }: SearchRow): SearchHit {
  return { ...toStoredRecord(row), rank };
}

/**
 * Record filters (a listing's, a forget's, a search's) as SQL conditions on `records` and their values in
 * order, the tenant apart; an absent or null filter keeps every record.
 */
export function filterConditions(filters: { [K in keyof RecordFilters]?: RecordFilters[K] | null }): { where: string[]; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  for (const field of ['agent_id', 'type', 'client'] as const) {
    const value = filters[field];
    if (value !== undefined && value !== null) {
      where.push(`${field} = ?`);
      values.push(value);
    }
  }
  if (filters.since !== undefined) {
    where.push('created_at >= ?');
    values.push(filters.since);
  }
  if (filters.until !== undefined) {
    where.push('created_at < ?');
    values.push(filters.until);
  }
  return { where, values };
}
