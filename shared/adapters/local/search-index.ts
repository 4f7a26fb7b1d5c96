import { isEmptyQuery } from '../../domain/query-parse.js';
import { rankFromScore } from '../../domain/rank.js';
import type { SearchHit } from '../../domain/record.js';
import type { SearchIndex, SearchQuery } from '../../ports.js';
import type { Statement } from 'better-sqlite3';
import type { Db } from './database.js';
import { SqlitePostingStorage } from './posting-storage.js';
import { toSearchHit, type RecordRow, type SearchRow } from './rows.js';
import { clausesOf, searchIndex, type TextQuery } from '../../search/searcher.js';
import type { Tail } from '../../search/tail.js';
import { TailCache } from './tail-cache.js';

/**
 * Search on the engine's index (shared/search) and its tail, the records above the merge mark
 * (search-merge.ts), so a record is found as soon as its write has returned; the records without `q` come
 * from the records table. Each search runs in one read transaction: the index, the merge mark, the tail and
 * the records it returns are one snapshot, whatever a merge or a write commits meanwhile.
 */
export class SqliteSearchIndex implements SearchIndex {
  /** Prepared statements by SQL text: a search has one of a few dozen shapes (which filters it has). */
  private readonly statements = new Map<string, Statement>();

  private readonly postings: SqlitePostingStorage;
  private readonly tails: TailCache;
  private readonly state: Statement;
  /** Runs `run` in one read transaction (a snapshot of the database). */
  private readonly inSnapshot: <T>(run: () => T) => T;

  constructor(private readonly db: Db) {
    this.postings = new SqlitePostingStorage(db);
    this.tails = new TailCache(db);
    this.state = db.prepare('SELECT merged_upto AS upTo, tail_gen AS gen FROM search_state');
    this.inSnapshot = db.transaction((run: () => unknown) => run()) as <T>(run: () => T) => T;
  }

  /** The tenant's tail as of the current transaction. */
  private tailOf(tenantId: string): Tail {
    const { upTo, gen } = this.state.get() as { upTo: number; gen: number };
    return this.tails.tailOf(tenantId, upTo, gen);
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
    return this.inSnapshot(() => this.rowsOf(tenantId, query));
  }

  /**
   * An upper bound on the postings a text search reads and the records it checks the filters of: the sum of
   * its terms' document frequencies, index and tail; a query with more than `maxClauses` clauses is not
   * counted (Infinity). The search pool runs a search this bounds small on the caller's thread.
   */
  workBound(tenantId: string, text: TextQuery, maxClauses: number): number {
    const clauses = clausesOf(text);
    if (clauses.length > maxClauses) return Infinity;
    return this.inSnapshot(() => {
      const tail = this.tailOf(tenantId);
      const upTo = this.postings.mergedUpTo();
      let work = 0;
      for (const clause of clauses) {
        for (const term of clause.terms) {
          const head = this.postings.head(tenantId, term);
          work += (head?.df ?? 0) + tail.postings(term, Math.max(upTo, head?.merged ?? 0)).reduce((n, b) => n + b.count, 0);
        }
      }
      return work;
    });
  }

  private rowsOf(tenantId: string, query: SearchQuery): SearchRow[] {
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
    const hits = searchIndex(this.postings, tenantId, query.text, { k: query.limit, accept, tail: this.tailOf(tenantId) });
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
