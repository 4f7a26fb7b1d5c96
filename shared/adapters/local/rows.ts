import type { Statement } from 'better-sqlite3';
import type { RecordFilters } from '../../domain/listing.js';
import { STORED_FIELDS, type StoredField } from '../../domain/record-schema.js';
import type { SearchHit, StoredRecord } from '../../domain/record.js';

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

/**
 * The same for a record that moves to a new seq (an update that changes its text, record-store.ts): the new
 * seq must be above every seq given before, and moves the counter, so the old one is never given again.
 */
export const SEQ_MOVE_TRIGGERS_SQL = `
  CREATE TRIGGER records_seq_moves_to_new BEFORE UPDATE OF seq ON records
  WHEN NEW.seq IS NOT OLD.seq AND (NEW.seq IS NULL OR NEW.seq <= (SELECT last_seq FROM search_state))
  BEGIN SELECT RAISE(ABORT, 'a record seq must be above every seq given before (search_state.last_seq)'); END;
  CREATE TRIGGER records_seq_move_counter AFTER UPDATE OF seq ON records WHEN NEW.seq IS NOT OLD.seq
  BEGIN UPDATE search_state SET last_seq = NEW.seq; END;
`;

/**
 * The columns of `records` besides `seq`: one for each field of the stored record, named as the field, in the
 * record's order (the table's own order, fixed by its migrations, differs; a test checks they hold the same).
 */
export const RECORD_COLUMNS = STORED_FIELDS;

/** The fields kept as JSON text: SQLite has no column type for an object. */
const JSON_COLUMNS = ['metadata', 'classification'] as const satisfies readonly StoredField[];
type JsonColumn = (typeof JSON_COLUMNS)[number];

/** A record's values as the named parameters (`@id`, …) of a statement that writes its row (record-sql.ts). */
export type RecordParams = Omit<StoredRecord, JsonColumn> & { [C in JsonColumn]: string | null };

/** A `records` row as SQLite returns it: the record's values as stored, and its `seq`. */
export type RecordRow = Omit<RecordParams, 'type'> & { seq: number; type: string };

/** The one mapping from a record to its row: the values a statement that writes the row binds. */
export function recordParams(record: StoredRecord): RecordParams {
  const params = {} as Record<StoredField, unknown>;
  for (const column of RECORD_COLUMNS) params[column] = record[column];
  for (const column of JSON_COLUMNS) params[column] = record[column] === null ? null : JSON.stringify(record[column]);
  return params as RecordParams;
}

/** The one mapping back: a row (as SELECT * gives it) as the domain record, its fields in the record's order. */
export function toStoredRecord(row: RecordRow): StoredRecord {
  const record = {} as Record<StoredField, unknown>;
  for (const column of RECORD_COLUMNS) record[column] = row[column];
  for (const column of JSON_COLUMNS) {
    const text = row[column];
    record[column] = text === null ? null : JSON.parse(text);
  }
  return record as StoredRecord;
}

/**
 * A search result as a flat row of strings and numbers: what crosses from a search thread to the server's
 * thread (search-pool.ts). Metadata stays the JSON text it is stored as until it reaches `toSearchHit`, so
 * the copy between threads never walks a caller's nested value.
 */
export type SearchRow = RecordRow & { rank: number };

/** Turns a search row into the domain search hit. */
export function toSearchHit(row: SearchRow): SearchHit {
  // The rank added to the record toStoredRecord makes, where a copy of the row and another of the record
  // took a third of what the hits cost past their reads (20 hits of the benchmark's records: 190 -> 140 µs).
  const hit = toStoredRecord(row) as SearchHit;
  hit.rank = row.rank;
  return hit;
}

/**
 * A statement's rows as objects keyed by their columns' names, as better-sqlite3 gives them, but made here
 * from the arrays it gives in raw mode: it makes its own objects a property at a time through V8's API,
 * which for the 20 records of a search took a third more (131 against 95 µs, 2026-11-28; docs/benchmarks.md,
 * "Where a request's time goes"). Raw mode is the statement's state, so the statement is the reader's alone.
 */
export class RowReader<Row> {
  private readonly names: readonly string[];

  constructor(private readonly statement: Statement) {
    statement.raw(true);
    this.names = statement.columns().map((column) => column.name);
  }

  all(...params: unknown[]): Row[] {
    return (this.statement.all(...params) as unknown[][]).map(this.toRow);
  }

  get(...params: unknown[]): Row | undefined {
    const values = this.statement.get(...params) as unknown[] | undefined;
    return values === undefined ? undefined : this.toRow(values);
  }

  /** A later column of the same name wins, as in better-sqlite3's own objects. */
  private readonly toRow = (values: readonly unknown[]): Row => {
    const row: Record<string, unknown> = {};
    const names = this.names;
    for (let i = 0; i < names.length; i++) row[names[i]!] = values[i];
    return row as Row;
  };
}

/** The record filters as filterConditions reads them: a listing's, a forget's, a search's. */
type Filters = { [K in Exclude<keyof RecordFilters, 'include_superseded'>]?: RecordFilters[K] | null } & { include_superseded?: boolean | null | undefined };

/**
 * Record filters as SQL conditions on `records` and their values in order, the tenant apart; an absent or
 * null filter keeps every record, except `include_superseded`, which as in RecordFilters keeps only the
 * current records unless it is true (a forget, which takes superseded records like any other, sets it).
 */
export function filterConditions(filters: Filters): { where: string[]; values: unknown[] } {
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
  if (filters.include_superseded !== true) where.push('superseded_by IS NULL');
  return { where, values };
}
