/**
 * The PostgreSQL peer's table and queries: a stored, weighted tsvector (title A, body B) with a GIN index
 * that includes the tenant, bulk loads with the indexes dropped, and searches ranked with `ts_rank`.
 *
 * Queries use OR semantics to match ours: the text is parsed by the service's own `parseQuery`, so both
 * engines see the same terms and phrases, and rebuilt as `websearch_to_tsquery` input of the form
 * `"a quoted phrase" or term or term`. Only letters and digits reach that string, and it goes to the server
 * as a parameter, so no user input can change the SQL or the tsquery's structure.
 */
import { availableParallelism } from 'node:os';
import type pg from 'pg';
import { isEmptyQuery, parseQuery, type ParsedQuery } from '../../shared/domain/query-parse.js';

/** One record as the peer stores it. */
export interface PeerRecord {
  tenant: string;
  id: string;
  agent_id: string;
  type: string;
  title: string;
  body: string;
  client: string | null;
  /** ISO 8601 date-time. */
  created_at: string;
}

/** A search as the peer takes it: the API's query parameters. */
export interface PeerQuery {
  /** Free text as a user would send it; absent or blank asks for the newest records. */
  q?: string;
  agent_id?: string;
  type?: string;
  client?: string;
  /** ISO 8601 date-time: only records created at or after it. */
  since?: string;
  limit: number;
}

/** A running PostgreSQL server loaded with records, searched as the service is. */
export interface PostgresPeer {
  /** The server's version, e.g. "PostgreSQL 15.18". */
  readonly version: string;
  /**
   * Loads records with multi-row INSERTs (one `unnest` of arrays per batch, several batches in flight),
   * with the GIN and recency indexes dropped; then builds them and runs VACUUM ANALYZE, as one would
   * after a bulk load, and a CHECKPOINT, so that no searches are timed beside one. May be called more than
   * once; each call rebuilds the indexes.
   */
  load(records: Iterable<PeerRecord> | AsyncIterable<PeerRecord>, onProgress?: (loaded: number) => void): Promise<void>;
  /** Ids of the tenant's matching records, best first. */
  search(tenant: string, query: PeerQuery): Promise<string[]>;
  /** Stops the server and removes its data directory. */
  stop(): Promise<void>;
}

/** Rows per INSERT statement while loading. */
const LOAD_BATCH = 2000;

/** The records table, created once on a fresh server. */
export const SCHEMA = `
  CREATE EXTENSION IF NOT EXISTS btree_gin;
  CREATE TABLE records (
    tenant text NOT NULL,
    id text NOT NULL,
    agent_id text NOT NULL,
    type text NOT NULL,
    client text,
    created_at timestamptz NOT NULL,
    title text NOT NULL,
    body text NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (
      setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', body), 'B')
    ) STORED,
    PRIMARY KEY (tenant, id)
  );`;

/** Built after each load (and dropped before it): faster than maintaining them row by row. */
const INDEXES = [
  // btree_gin lets the tenant sit in the same GIN index as the lexemes.
  'CREATE INDEX records_tsv ON records USING gin (tenant, tsv)',
  // The search without text: newest first.
  'CREATE INDEX records_recent ON records (tenant, created_at DESC, id DESC)',
];

const INSERT = `
  INSERT INTO records (tenant, id, agent_id, type, client, created_at, title, body)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::text[], $8::text[])`;

/** The peer on a pool of connections to a started server; `stop` is the server's. */
export class Peer implements PostgresPeer {
  constructor(
    readonly version: string,
    private readonly pool: pg.Pool,
    readonly stop: () => Promise<void>,
  ) {}

  async load(records: Iterable<PeerRecord> | AsyncIterable<PeerRecord>, onProgress?: (loaded: number) => void): Promise<void> {
    await this.pool.query('DROP INDEX IF EXISTS records_tsv; DROP INDEX IF EXISTS records_recent');
    // to_tsvector for the stored column is the bulk of the work, and it runs in the inserting backend:
    // keep one batch in flight per core.
    const inFlight = new Set<Promise<void>>();
    const parallel = Math.max(1, Math.min(8, availableParallelism()));
    let failure: unknown = null;
    let loaded = 0;
    let batch: PeerRecord[] = [];
    const flush = async (rows: PeerRecord[]) => {
      while (inFlight.size >= parallel) await Promise.race(inFlight);
      if (failure) throw failure;
      const p = this.insert(rows).then(
        () => {
          loaded += rows.length;
          onProgress?.(loaded);
        },
        (error: unknown) => {
          failure ??= error;
        },
      );
      const tracked = p.finally(() => inFlight.delete(tracked));
      inFlight.add(tracked);
    };
    for await (const record of records) {
      batch.push(record);
      if (batch.length >= LOAD_BATCH) {
        await flush(batch);
        batch = [];
      }
    }
    if (batch.length > 0) await flush(batch);
    await Promise.all(inFlight);
    if (failure) throw failure;
    for (const sql of INDEXES) await this.pool.query(sql);
    await this.pool.query('VACUUM ANALYZE records');
    // The load's pages written out now: the searches (ours run while this server idles, then its own) are
    // timed without a checkpoint flushing them in the middle.
    await this.pool.query('CHECKPOINT');
  }

  private async insert(rows: PeerRecord[]): Promise<void> {
    const columns: (string | null)[][] = [[], [], [], [], [], [], [], []];
    for (const r of rows) {
      columns[0]!.push(r.tenant);
      columns[1]!.push(r.id);
      columns[2]!.push(r.agent_id);
      columns[3]!.push(r.type);
      columns[4]!.push(r.client);
      columns[5]!.push(r.created_at);
      columns[6]!.push(r.title);
      columns[7]!.push(r.body);
    }
    await this.pool.query(INSERT, columns);
  }

  async search(tenant: string, query: PeerQuery): Promise<string[]> {
    if (!Number.isInteger(query.limit) || query.limit < 1) throw new Error(`limit must be a positive integer, not ${query.limit}`);
    const params: unknown[] = [tenant];
    const where = ['tenant = $1'];
    for (const field of ['agent_id', 'type', 'client'] as const) {
      const value = query[field];
      if (value !== undefined && value !== null) {
        params.push(value);
        where.push(`${field} = $${params.length}`);
      }
    }
    if (query.since !== undefined) {
      params.push(query.since);
      where.push(`created_at >= $${params.length}::timestamptz`);
    }

    const parsed = parseQuery(query.q);
    let sql: string;
    if (parsed === null) {
      params.push(query.limit);
      sql = `SELECT id FROM records WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`;
    } else {
      // Only stop words or punctuation: nothing to match, as in the service.
      if (isEmptyQuery(parsed)) return [];
      params.push(websearchText(parsed));
      const text = params.length;
      params.push(query.limit);
      sql = `SELECT id FROM records, websearch_to_tsquery('english', $${text}) AS query
             WHERE ${where.join(' AND ')} AND tsv @@ query
             ORDER BY ts_rank(tsv, query) DESC, created_at DESC, id DESC LIMIT $${params.length}`;
    }
    const result = await this.pool.query<{ id: string }>(sql, params);
    return result.rows.map((row) => row.id);
  }
}

/**
 * The `websearch_to_tsquery` input for a parsed query: each phrase in double quotes, each term bare, all
 * joined by `or`. The parser keeps only runs of letters, digits and marks, so no quote, minus sign or
 * other websearch syntax can come from the user; the only operator word, "or", is a stop word outside
 * quotes and plain text inside them.
 */
export function websearchText(query: ParsedQuery): string {
  return [...query.phrases.map((words) => `"${words.join(' ')}"`), ...query.terms].join(' or ');
}
