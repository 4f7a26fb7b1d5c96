import type { RecordFilters } from '../../domain/listing.js';
import type { Classification, RecordType, SearchHit, StoredRecord } from '../../domain/record.js';

/**
 * The `seq` of a record being inserted: one above the last seq ever given (`search_state.last_seq`), never
 * a seq a record had before. `seq` is a rowid without AUTOINCREMENT, so SQLite alone would give a new
 * record the seq of a deleted newest one, which a merge batch or a term's merge mark may already cover
 * (search-merge.ts, invariant 1): the record would never be found.
 */
export const NEXT_SEQ_SQL = '(SELECT last_seq + 1 FROM search_state)';

/**
 * What keeps the counter (a migration in database.ts makes them): every insert into `records` must take a
 * seq above it, or fails, whatever statement it comes from; and moves it to the new seq.
 */
export const SEQ_TRIGGERS_SQL = `
  CREATE TRIGGER records_seq_is_new BEFORE INSERT ON records
  WHEN NEW.seq IS NULL OR NEW.seq <= (SELECT last_seq FROM search_state)
  BEGIN SELECT RAISE(ABORT, 'a record seq must be above every seq given before (search_state.last_seq)'); END;
  CREATE TRIGGER records_seq_counter AFTER INSERT ON records
  BEGIN UPDATE search_state SET last_seq = NEW.seq; END;
`;

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
