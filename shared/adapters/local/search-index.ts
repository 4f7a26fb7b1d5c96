import { isEmptyQuery } from '../../domain/query-parse.js';
import { rankFromScore } from '../../domain/rank.js';
import type { SearchHit } from '../../domain/record.js';
import type { SearchIndex, SearchQuery } from '../../ports.js';
import type { Statement } from 'better-sqlite3';
import type { Db } from './database.js';
import { ftsMatchExpression } from './fts-query.js';
import { tenantToken, toStoredRecord, type RecordRow } from './rows.js';

/** bm25() column weights for (title, body, tenant): a title match weighs four times a body match. */
export const BM25_WEIGHTS = { title: 4, body: 1 } as const;

/**
 * Search on the SQLite FTS5 index kept in the same transactions as the records, so a record is found as
 * soon as its write has returned.
 */
export class SqliteSearchIndex implements SearchIndex {
  /** Prepared statements by SQL text: a search has one of a few dozen shapes (which filters it has). */
  private readonly statements = new Map<string, Statement>();

  constructor(private readonly db: Db) {}

  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) this.statements.set(sql, (statement = this.db.prepare(sql)));
    return statement;
  }

  async search(tenantId: string, query: SearchQuery): Promise<SearchHit[]> {
    const filters: string[] = ['r.tenant_id = @tenant'];
    const params: Record<string, unknown> = { tenant: tenantId, limit: query.limit };
    for (const field of ['agent_id', 'type', 'client'] as const) {
      const value = query[field];
      if (value !== undefined && value !== null) {
        filters.push(`r.${field} = @${field}`);
        params[field] = value;
      }
    }
    if (query.since !== undefined) {
      filters.push('r.created_at >= @since');
      params.since = query.since;
    }

    if (query.text === null) {
      const rows = this.statement(
        `SELECT r.* FROM records r WHERE ${filters.join(' AND ')} ORDER BY r.created_at DESC, r.seq DESC LIMIT @limit`,
      ).all(params) as RecordRow[];
      return rows.map((row) => ({ ...toStoredRecord(row), rank: 0 }));
    }
    if (isEmptyQuery(query.text)) return [];

    params.match = ftsMatchExpression(tenantToken(tenantId), query.text);
    // CROSS JOIN keeps the full-text match as the outer loop. With a plain JOIN, a selective-looking filter
    // (`since`, the tenant) can make SQLite walk the records by index and run the match once per record:
    // measured 20 ms instead of under 1 ms at 5 000 records.
    const rows = this.statement(
      `SELECT r.*, -bm25(records_fts, ${BM25_WEIGHTS.title}, ${BM25_WEIGHTS.body}, 0) AS score
       FROM records_fts CROSS JOIN records r ON r.seq = records_fts.rowid
       WHERE records_fts MATCH @match AND ${filters.join(' AND ')}
       ORDER BY score DESC, r.seq DESC LIMIT @limit`,
    ).all(params) as (RecordRow & { score: number })[];
    return rows.map(({ score, ...row }) => ({ ...toStoredRecord(row), rank: rankFromScore(score) }));
  }
}
