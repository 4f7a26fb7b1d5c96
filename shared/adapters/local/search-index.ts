import { isEmptyQuery } from '../../domain/query-parse.js';
import { rankFromScore } from '../../domain/rank.js';
import type { SearchHit } from '../../domain/record.js';
import type { SearchIndex, SearchQuery } from '../../ports.js';
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
  constructor(private readonly db: Db) {}

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
      const rows = this.db
        .prepare<Record<string, unknown>, RecordRow>(
          `SELECT r.* FROM records r WHERE ${filters.join(' AND ')} ORDER BY r.created_at DESC, r.seq DESC LIMIT @limit`,
        )
        .all(params);
      return rows.map((row) => ({ ...toStoredRecord(row), rank: 0 }));
    }
    if (isEmptyQuery(query.text)) return [];

    params.match = ftsMatchExpression(tenantToken(tenantId), query.text);
    const rows = this.db
      .prepare<Record<string, unknown>, RecordRow & { score: number }>(
        `SELECT r.*, -bm25(records_fts, ${BM25_WEIGHTS.title}, ${BM25_WEIGHTS.body}, 0) AS score
         FROM records_fts JOIN records r ON r.seq = records_fts.rowid
         WHERE records_fts MATCH @match AND ${filters.join(' AND ')}
         ORDER BY score DESC, r.seq DESC LIMIT @limit`,
      )
      .all(params);
    return rows.map(({ score, ...row }) => ({ ...toStoredRecord(row), rank: rankFromScore(score) }));
  }
}
