import { isEmptyQuery } from '../../domain/query-parse.js';
import { RANKING, rankFromScore } from '../../domain/rank.js';
import type { SearchHit } from '../../domain/record.js';
import type { SearchIndex, SearchQuery } from '../../ports.js';
import type { Statement } from 'better-sqlite3';
import type { Db } from './database.js';
import { newestBlockOf } from './newest.js';
import { SqlitePostingStorage } from './posting-storage.js';
import { filterConditions, toSearchHit, type SearchRow } from './rows.js';
import { FILTER_EXCLUDED_MAX, searchCost } from '../../search/cost.js';
import type { Filter } from '../../search/filter.js';
import { clausesOf, type TextQuery } from '../../search/query.js';
import { searchScored } from '../../search/searcher.js';
import type { Tail } from '../../search/tail.js';
import { TailCache } from './tail-cache.js';

/**
 * The statement of a search without `q`: the tenant's newest records that pass the filters, newest first,
 * each as a search row of rank 0, and its values after the tenant's id (the limit follows them). The
 * search pool's cost bound relies on how SQLite plans it (search-pool.ts, `searchWork`).
 */
export function newestRecordsSql(query: SearchQuery): { sql: string; values: unknown[] } {
  const { where, values } = filterConditions(query);
  return { sql: `SELECT r.*, 0 AS rank FROM records r WHERE r.tenant_id = ?${where.map((c) => ` AND r.${c}`).join('')} ORDER BY r.created_at DESC, r.id DESC LIMIT ?`, values };
}

/**
 * Search on the engine's index (shared/search) and its tail, the records above the merge mark
 * (search-merge.ts), so a record is found as soon as its write has returned; the records without `q` come
 * from the records table. Each search runs in one read transaction: the index, the merge mark, the tail and
 * the records it returns are one snapshot, whatever a merge or a write commits meanwhile. The engine ranks
 * with the domain's RANKING, as OpenSearch does.
 */
export class SqliteSearchIndex implements SearchIndex {
  /** Prepared statements by SQL text: a search has one of a few dozen shapes (which filters it has). */
  private readonly statements = new Map<string, Statement>();

  private readonly postings: SqlitePostingStorage;
  private readonly tails: TailCache;
  private readonly state: Statement;
  private readonly excludedMax: number;
  /** Runs `run` in one read transaction (a snapshot of the database). */
  private readonly inSnapshot: <T>(run: () => T) => T;

  /**
   * `excludedMax`: the most superseded records of a tenant a search leaves out by a list read before it
   * (FILTER_EXCLUDED_MAX); with more, the filter checks them one candidate at a time. Tests set it low to
   * check that way on a few records.
   */
  constructor(
    private readonly db: Db,
    { excludedMax = FILTER_EXCLUDED_MAX }: { excludedMax?: number } = {},
  ) {
    this.excludedMax = excludedMax;
    this.postings = new SqlitePostingStorage(db);
    this.tails = new TailCache(db);
    // With whether the tenant has superseded records at all: one probe of their partial index, in the statement
    // every search runs anyway, so that a tenant without any (the usual case) pays no statement for them.
    this.state = db.prepare(
      'SELECT merged_upto AS upTo, tail_gen AS gen, EXISTS (SELECT 1 FROM records INDEXED BY records_superseded WHERE tenant_id = ? AND superseded_by IS NOT NULL) AS superseded FROM search_state',
    );
    this.inSnapshot = db.transaction((run: () => unknown) => run()) as <T>(run: () => T) => T;
  }

  /** The tenant's tail, the merge mark and whether it has superseded records, as of the current transaction (one statement). */
  private tailOf(tenantId: string): { tail: Tail; upTo: number; superseded: boolean } {
    const { upTo, gen, superseded } = this.state.get(tenantId) as { upTo: number; gen: number; superseded: 0 | 1 };
    return { tail: this.tails.tailOf(tenantId, upTo, gen), upTo, superseded: superseded === 1 };
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
   * An upper bound on the postings and positions a text search reads and the records it checks the filters
   * of (searchCost, shared/search/cost.ts), from the terms' heads and metas and the tail's counts; a query
   * with more than `maxClauses` words and phrases is not counted (Infinity; its pairs of adjacent words are
   * counted from the same heads). It stops counting past `limit`. The search pool runs a search this bounds
   * small on the caller's thread.
   */
  workBound(tenantId: string, text: TextQuery, maxClauses: number, limit = Infinity): number {
    const clauses = clausesOf(text);
    if (clauses.filter((c) => !c.adjacent).length > maxClauses) return Infinity;
    return this.inSnapshot(() => searchCost(this.postings, tenantId, clauses, this.tailOf(tenantId).tail, limit));
  }

  private rowsOf(tenantId: string, query: SearchQuery): SearchRow[] {
    if (query.text === null) {
      // The record filters, as conditions on the table and their values in order; the tenant is checked apart.
      const { sql, values } = newestRecordsSql(query);
      return this.statement(sql).all(tenantId, ...values, query.limit) as SearchRow[];
    }
    if (isEmptyQuery(query.text)) return [];

    // The engine (shared/search) ranks document numbers, which are the records' seq; the filters are asked
    // only about a record that would enter the top `limit`. Superseded records are left out apart (filterOf).
    const { where: conditions, values } = filterConditions({ ...query, include_superseded: true });
    const { tail, upTo, superseded } = this.tailOf(tenantId);
    const filter = this.filterOf(tenantId, query, conditions, values, upTo, superseded && query.include_superseded !== true);
    const { hits, best } = searchScored(this.postings, tenantId, query.text, { k: query.limit, filter, ranking: RANKING, tail });
    if (hits.length === 0) return [];
    // The rank comes back in the row, which is then the search row as it is (no copy of a record a hit).
    const row = this.statement('SELECT *, ? AS rank FROM records WHERE seq = ? AND tenant_id = ?');
    const rows: SearchRow[] = [];
    for (const hit of hits) {
      const rank = rankFromScore(hit.score, best);
      // The hits come best first, so the first one below the cut-off ends them: the rest rank lower still.
      if (rank < (query.min_rank ?? 0)) break;
      const found = row.get(rank, hit.doc, tenantId) as SearchRow | undefined;
      if (found) rows.push(found);
    }
    return rows;
  }

  /**
   * The record filters as the engine's filter clause (shared/search/filter.ts), which decides which way to
   * read them: one record at a time on the covering index `records_tenant_filters` (one lookup), a window
   * of records by one range of it, or, for a search by agent, the agent's records listed from their own
   * index (`records_tenant_agent_created`). A window of merged records (at or below `upTo`, the merge mark
   * of this snapshot) that `since` rules out by its blocks' newest times (newest.ts) is skipped without
   * reading its records; `until` skips no window that way, since a block's newest time bounds none of its
   * records from below (an import keeps old times), so it is checked on the records as the other filters
   * are. With `leaveOut` (the tenant has superseded records and the search does not include them), they
   * are left out: read from their partial index before the search when there are few, else checked with the
   * rest, one probe each. None without filters.
   */
  private filterOf(tenantId: string, query: SearchQuery, conditions: string[], values: unknown[], upTo: number, leaveOut: boolean): Filter | undefined {
    const superseded = !leaveOut
      ? []
      : (this.statement('SELECT seq FROM records INDEXED BY records_superseded WHERE tenant_id = ? AND superseded_by IS NOT NULL ORDER BY seq LIMIT ?')
          .pluck()
          .all(tenantId, this.excludedMax + 1) as number[]);
    const many = superseded.length > this.excludedMax;
    const excluded = superseded.length > 0 && !many ? { excluded: Uint32Array.from(superseded) } : {};
    if (conditions.length === 0 && !many) return superseded.length === 0 ? undefined : { matches: () => true, ...excluded };
    const where =
      conditions.map((c) => ` AND m.${c}`).join('') +
      (many ? ' AND NOT EXISTS (SELECT 1 FROM records s INDEXED BY records_superseded WHERE s.tenant_id = m.tenant_id AND s.seq = m.seq AND s.superseded_by IS NOT NULL)' : '');
    const check = this.statement(`SELECT 1 FROM records m INDEXED BY records_tenant_filters WHERE m.tenant_id = ? AND m.seq = ?${where}`).pluck();
    const any = this.statement(`SELECT 1 FROM records m INDEXED BY records_tenant_filters WHERE m.tenant_id = ? AND m.seq BETWEEN ? AND ?${where} LIMIT 1`).pluck();
    const since = query.since;
    const newer =
      since === undefined ? null : this.statement('SELECT 1 FROM search_newest WHERE tenant_id = ? AND block BETWEEN ? AND ? AND newest >= ? LIMIT 1').pluck();
    const mayBeNewEnough = (from: number, to: number) =>
      newer === null || to > upTo || newer.get(tenantId, newestBlockOf(from), newestBlockOf(to), since) !== undefined;
    const filter: Filter = {
      ...excluded,
      matches: (seq) => check.get(tenantId, seq, ...values) !== undefined,
      mayMatchIn: (from, to) => mayBeNewEnough(from, to) && any.get(tenantId, from, to, ...values) !== undefined,
    };
    const agent = query.agent_id;
    if (agent === undefined || agent === null) return filter;
    filter.list = {
      atMost: (most) => {
        const few = this.statement(
          'SELECT seq FROM records INDEXED BY records_tenant_agent_created WHERE tenant_id = ? AND agent_id = ? LIMIT ?',
        ).pluck().all(tenantId, agent, most + 1) as number[];
        return few.length > most ? null : Uint32Array.from(few).sort();
      },
      // The agent's records pass when the agent is the only filter (the excluded ones apart, which are left out first).
      exact: conditions.length === 1 && !many,
    };
    return filter;
  }
}
