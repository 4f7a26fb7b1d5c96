import { isEmptyQuery } from '../../domain/query-parse.js';
import { rankFromScore } from '../../domain/rank.js';
import type { SearchHit } from '../../domain/record.js';
import type { SearchIndex, SearchQuery } from '../../ports.js';
import type { Statement } from 'better-sqlite3';
import type { Db } from './database.js';
import { SqlitePostingStorage } from './posting-storage.js';
import { toSearchHit, type RecordRow, type SearchRow } from './rows.js';
import { searchIndex } from '../../search/searcher.js';

/**
 * Search on the engine's index (shared/search), kept in the same transactions as the records, so a record
 * is found as soon as its write has returned; the records without `q` come from the records table.
 */
export class SqliteSearchIndex implements SearchIndex {
  /** Prepared statements by SQL text: a search has one of a few dozen shapes (which filters it has). */
  private readonly statements = new Map<string, Statement>();

  private readonly postings: SqlitePostingStorage;

  constructor(private readonly db: Db) {
    this.postings = new SqlitePostingStorage(db);
  }

  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) this.statements.set(sql, (statement = this.db.prepare(sql)));
    return statement;
  }

  async search(tenantId: string, query: SearchQuery): Promise<SearchHit[]> {
    return this.searchRows(tenantId, query).map(toSearchHit);
  }

  /** The search's results as flat rows, best first (search-pool.ts runs this on its threads). */
  searchRows(tenantId: string, query: SearchQuery): SearchRow[] {
    // The record filters, as conditions on a table alias; the tenant is checked apart.
    const conditions: string[] = [];
    const params: Record<string, unknown> = { tenant: tenantId, limit: query.limit };
    for (const field of ['agent_id', 'type', 'client'] as const) {
      const value = query[field];
      if (value !== undefined && value !== null) {
        conditions.push(`${field} = @${field}`);
        params[field] = value;
      }
    }
    if (query.since !== undefined) {
      conditions.push('created_at >= @since');
      params.since = query.since;
    }
    const on = (alias: string) => conditions.map((c) => ` AND ${alias}.${c}`).join('');

    if (query.text === null) {
      const rows = this.statement(
        `SELECT r.* FROM records r WHERE r.tenant_id = @tenant${on('r')} ORDER BY r.created_at DESC, r.seq DESC LIMIT @limit`,
      ).all(params) as RecordRow[];
      return rows.map((row) => ({ ...row, rank: 0 }));
    }
    if (isEmptyQuery(query.text)) return [];

    // The engine (shared/search) ranks document numbers, which are the records' seq; the filters are asked
    // only about a record that would enter the top `limit`, from the covering index `records_filters`.
    const accept =
      conditions.length === 0
        ? undefined
        : (() => {
            const check = this.statement(`SELECT 1 FROM records m INDEXED BY records_filters WHERE m.seq = @seq AND m.tenant_id = @tenant${on('m')}`);
            const { limit: _, ...filters } = params;
            return (seq: number) => check.get({ ...filters, seq }) !== undefined;
          })();
    const hits = searchIndex(this.postings, tenantId, query.text, { k: query.limit, accept });
    if (hits.length === 0) return [];
    const row = this.statement('SELECT * FROM records WHERE seq = ? AND tenant_id = ?');
    const rows: (RecordRow & { score: number })[] = [];
    for (const hit of hits) {
      const found = row.get(hit.doc, tenantId) as RecordRow | undefined;
      if (found) rows.push({ ...found, score: hit.score });
    }
    return rows.map(({ score, ...row }) => ({ ...row, rank: rankFromScore(score) }));
  }
}
