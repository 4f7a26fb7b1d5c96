import { isEmptyQuery, type ParsedQuery } from '../../domain/query-parse.js';
import { cutsEveryHit, RANKING, rankFromScore } from '../../domain/rank.js';
import type { SearchHit } from '../../domain/record.js';
import type { SearchIndex, SearchQuery } from '../../ports.js';
import type { Statement } from 'better-sqlite3';
import { preparedBySql, type Db } from './db.js';
import { newestBlockOf } from './newest.js';
import { SqlitePostingStorage } from './posting-storage.js';
import { filterConditions, RowReader, toSearchHit, type SearchRow } from './rows.js';
import { FILTER_EXCLUDED_MAX, FILTER_SAMPLE, filterListReadMost, searchCost } from '../../search/cost.js';
import type { Filter } from '../../search/filter.js';
import { clausesOf } from '../../search/query.js';
import { searchScored } from '../../search/searcher.js';
import { SnapshotReads, type PostingStorage } from '../../search/storage.js';
import type { Tail } from '../../search/tail.js';
import { TailCache } from './tail-cache.js';

/**
 * The statement of a search without `q`: the tenant's newest records that pass the filters, newest first,
 * each as a search row of rank 0, and its values after the tenant's id (the limit follows them). The
 * search pool's cost bound relies on how SQLite plans it (`workOf`). `from`: only the records newer than a
 * record of the range, whose created_at and id follow the values (`newestWithin`).
 */
export function newestRecordsSql(query: SearchQuery, { from = false }: { from?: boolean } = {}): { sql: string; values: unknown[] } {
  if (!from) {
    const { where, values } = filterConditions(query);
    return { sql: `SELECT r.*, 0 AS rank ${newestFirst(where)} LIMIT ?`, values };
  }
  // The range of the same index from the top down to that record, which makes the `since` it is within
  // needless. The index is named: with the record's bound, SQLite may plan the tenant's index for an agent's
  // search, walking every agent's records (test/unit/newest-walk.test.ts holds the plans).
  const { where, values } = filterConditions({ ...query, since: undefined });
  return { sql: `SELECT r.*, 0 AS rank ${newestFirst(where, newestIndexOf(query), ' AND (r.created_at, r.id) > (?, ?)')} LIMIT ?`, values };
}

/**
 * The statement that finds where a walk of the newest `walk` records of a search without `q` stops (its
 * OFFSET is `walk`): the next record of the index range it walks (the tenant's, or the agent's, within its
 * times), whatever the type, client or supersedes; none when the range has no more than `walk`. SQLite reads
 * `walk` + 1 entries of the index, nothing else.
 */
export function newestEdgeSql(query: SearchQuery): { sql: string; values: unknown[] } {
  const { where, values } = filterConditions({ agent_id: query.agent_id, since: query.since, until: query.until, include_superseded: true });
  return { sql: `SELECT r.created_at, r.id ${newestFirst(where, newestIndexOf(query))} LIMIT 1 OFFSET ?`, values };
}

/**
 * The tenant's records that pass the conditions `where` (filterConditions') and `also`, newest first: what
 * every statement of a search without `q` reads, so that a walk's edge and the rows above it come in one
 * order; on the named index when given.
 */
const newestFirst = (where: readonly string[], index?: string, also = '') =>
  `FROM records r${index ? ` INDEXED BY ${index}` : ''} WHERE r.tenant_id = ?${where.map((c) => ` AND r.${c}`).join('')}${also} ORDER BY r.created_at DESC, r.id DESC`;

/** The index a search without `q` walks: the tenant's records by time, or the agent's. */
const newestIndexOf = (query: SearchQuery) => (query.agent_id === undefined || query.agent_id === null ? 'records_tenant_created' : 'records_tenant_agent_created');

/** What a search of one tenant reads first, in its snapshot: its tail, the merge mark, whether it has superseded records. */
interface TenantState {
  tail: Tail;
  upTo: number;
  superseded: boolean;
}

/** The most words and phrases of a query whose work is counted (`workOf`); a query with more is not. */
const MAX_COUNTED_CLAUSES = 8;

/** A search without `q` reads its `limit` newest records from an index in the order asked, unless it filters by type or client (`workOf`). */
function newestWork(query: SearchQuery): number {
  const none = (value: unknown) => value === undefined || value === null;
  return none(query.type) && none(query.client) ? query.limit : Infinity;
}

/**
 * How many of the newest records a search without `q` by a type or a client walks on the caller's thread
 * (`searchWithin`) before it leaves the search to a search thread's walk, which has no bound. Each is one
 * index entry, checked on the entry (migration 12), read once to find where the walk ends and once to walk
 * it: the bound of work counts each read as a posting (`newestWalkWork`), more than the hop's cost, so the
 * walk runs on the caller's thread only when no other search runs or waits (search-pool.ts).
 * 256 hold the 20 newest of a type or a client of one record in 10, the benchmark's usual case, and take
 * some 0.1 ms with the rows; a walk of 4 096 answered more of its searches there (129 of 149 at a million
 * records, against 89) but kept the server's thread from the others longer, which at concurrency 8 cost
 * more than it saved (docs/benchmarks.md).
 */
export const NEWEST_WALK = 256;

/** The work of a walk of `walk` records (NEWEST_WALK): the entries read to find its end, then walked. */
export const newestWalkWork = (walk: number) => 2 * walk + 1;

/**
 * The most a search connection keeps of the sealed blocks it has read, between searches (block-cache.ts,
 * posting-storage.ts): enough for what the benchmark's searches of every kind read in the biggest tenant of
 * a million records (500 000 records: about 71 MB of blocks, the commonest words' some 20 MB of it, which
 * every search of them reads whole), with room for the other tenants'. At 64 MiB, after the searches of
 * every tenant, that tenant's searches were 1.1 to 1.3 times slower (docs/benchmarks.md). The server has one
 * search connection on its own thread and one on each search thread, each with its own.
 */
export const BLOCK_CACHE_BYTES = 128 * 2 ** 20;

/**
 * Search on the engine's index (shared/search) and its tail, the records above the merge mark
 * (search-merge.ts), so a record is found as soon as its write has returned; the records without `q` come
 * from the records table. Each search runs in one read transaction: the index, the merge mark, the tail and
 * the records it returns are one snapshot, whatever a merge or a write commits meanwhile. The engine ranks
 * with the domain's RANKING, as OpenSearch does.
 */
export class SqliteSearchIndex implements SearchIndex {
  /** Prepared statements by SQL text: a search has one of a few dozen shapes (which filters it has). */
  private readonly statement: (sql: string) => Statement;
  /** The same for the statements that read the records a search returns, each read through its own RowReader. */
  private readonly rows: (sql: string) => RowReader<SearchRow>;

  private readonly postings: SqlitePostingStorage;
  private readonly tails: TailCache;
  private readonly state: Statement;
  private readonly excludedMax: number;
  private readonly newestWalk: number;
  /** Runs `run` in one read transaction (a snapshot of the database). */
  private readonly inSnapshot: <T>(run: () => T) => T;

  /**
   * `excludedMax`: the most superseded records of a tenant a search leaves out by a list read before it
   * (FILTER_EXCLUDED_MAX); with more, the filter checks them one candidate at a time. Tests set it low to
   * check that way on a few records. `blockCacheBytes`: the budget of the blocks kept between searches
   * (BLOCK_CACHE_BYTES; 0 keeps none). `newestWalk`: how many records a search without `q` by a type or a
   * client walks on the caller's thread (NEWEST_WALK unless given; tests walk a few).
   */
  constructor(
    db: Db,
    {
      excludedMax = FILTER_EXCLUDED_MAX,
      blockCacheBytes = BLOCK_CACHE_BYTES,
      newestWalk = NEWEST_WALK,
    }: { excludedMax?: number; blockCacheBytes?: number; newestWalk?: number } = {},
  ) {
    this.excludedMax = excludedMax;
    this.statement = preparedBySql((sql) => db.prepare(sql));
    this.rows = preparedBySql((sql) => new RowReader<SearchRow>(db.prepare(sql)));
    this.newestWalk = newestWalk;
    this.postings = new SqlitePostingStorage(db, { cacheBytes: blockCacheBytes });
    this.tails = new TailCache(db);
    // With whether the tenant has superseded records at all: one probe of their partial index, in the statement
    // every search runs anyway, so that a tenant without any (the usual case) pays no statement for them.
    this.state = db.prepare(
      'SELECT merged_upto AS upTo, tail_gen AS gen, block_gen AS blockGen, EXISTS (SELECT 1 FROM records INDEXED BY records_superseded WHERE tenant_id = ? AND superseded_by IS NOT NULL) AS superseded FROM search_state',
    );
    const transaction = db.transaction((run: () => unknown) => run()) as <T>(run: () => T) => T;
    // The cache of blocks is vouched for by the snapshot that reads the blocks' generation (tailOf), and by no other.
    this.inSnapshot = (run) => {
      try {
        return transaction(run);
      } finally {
        this.postings.endSnapshot();
      }
    };
  }

  /** The tenant's tail, the merge mark and whether it has superseded records, as of the current transaction (one statement). */
  private tailOf(tenantId: string): TenantState {
    const { upTo, gen, blockGen, superseded } = this.state.get(tenantId) as { upTo: number; gen: number; blockGen: number; superseded: 0 | 1 };
    this.postings.useCache(blockGen);
    return { tail: this.tails.tailOf(tenantId, upTo, gen), upTo, superseded: superseded === 1 };
  }

  async search(tenantId: string, query: SearchQuery): Promise<SearchHit[]> {
    return this.searchRows(tenantId, query).map(toSearchHit);
  }

  /** The search's results as flat rows, best first (search-pool.ts runs this on its threads). */
  searchRows(tenantId: string, query: SearchQuery): SearchRow[] {
    if (cutsEveryHit(query)) return [];
    return this.inSnapshot(() => (query.text === null ? this.newestRows(tenantId, query) : this.textRows(tenantId, query, query.text, this.tailOf(tenantId), this.postings)));
  }

  /**
   * The search's hits when its work (`workOf`) is at most `most`, else undefined: the search pool runs a
   * search this bounds small on its caller's thread. The bound and the search are one snapshot, and the
   * search reads the terms' heads and metas the bound has read (SnapshotReads) rather than again.
   */
  searchWithin(tenantId: string, query: SearchQuery, most: number): SearchHit[] | undefined {
    const text = query.text;
    if (text === null) {
      if (cutsEveryHit(query)) return [];
      if (newestWork(query) <= most) return this.inSnapshot(() => this.newestRows(tenantId, query)).map(toSearchHit);
      return newestWalkWork(this.newestWalk) <= most ? this.inSnapshot(() => this.newestWithin(tenantId, query))?.map(toSearchHit) : undefined;
    }
    const rows = this.inSnapshot(() => {
      const state = this.tailOf(tenantId);
      const reads = new SnapshotReads(this.postings);
      if (this.textWork(tenantId, query, text, state.tail, reads, MAX_COUNTED_CLAUSES, most) > most) return undefined;
      return this.textRows(tenantId, query, text, state, reads);
    });
    return rows?.map(toSearchHit);
  }

  /**
   * How much a search may cost, for the search pool to choose where it runs (search-pool.ts): a bound by
   * construction, never a guess from the tenant's past.
   * - Without `q`, and with no filter but an agent and a time range (`since`, `until`), it reads the
   *   `limit` (at most 100) newest rows from an index in the order asked: `records_tenant_created`
   *   (tenant_id, created_at, id) without an agent, `records_tenant_agent_created` (tenant_id, agent_id,
   *   created_at, id) with one, the range a range of that index (database.ts; the plans are checked by
   *   test/unit/sqlite-search-pool.test.ts): bounded by the limit, as without filters (the superseded records
   *   it passes over apart, in both). With a type or a client it is unbounded: no index has them in that
   *   order, so it walks the tenant's newest records until `limit` of them match (a rare type in a large
   *   tenant), each checked on the index's entry, which ends in the type and the client (migration 12), and
   *   its row read only if it matches. (`searchWithin` walks at most NEWEST_WALK of them, and answers only
   *   when that is enough.)
   * - With `q`, the engine reads no more postings than the document frequencies of the query's terms add up
   *   to, and asks the filters about no more records than that; a phrase also reads its words' positions, which
   *   the bound adds from the block metas (shared/search/cost.ts). A search by agent may also read the agent's
   *   records from their index (their seq: to lead the search when they are few, and to list them once 64
   *   candidates have been checked one by one), at most filterListReadMost of them (cost.ts), each
   *   counted as a posting (about 0.15 µs each; decoding and scoring a posting 0.02 to 0.13). The frequencies
   *   are the index's (one indexed lookup a term) and the tail's counts, nothing is copied, and counting stops
   *   once the bound passes `limit`; a query with more than `maxClauses` words and phrases is not counted
   *   (Infinity; its pairs of adjacent words are counted from the same heads).
   */
  workOf(tenantId: string, query: SearchQuery, { maxClauses = MAX_COUNTED_CLAUSES, limit = Infinity }: { maxClauses?: number; limit?: number } = {}): number {
    const text = query.text;
    if (text === null) return newestWork(query);
    return this.inSnapshot(() => this.textWork(tenantId, query, text, this.tailOf(tenantId).tail, this.postings, maxClauses, limit));
  }

  private textWork(tenantId: string, query: SearchQuery, text: ParsedQuery, tail: Tail, storage: PostingStorage, maxClauses: number, limit: number): number {
    const clauses = clausesOf(text);
    if (clauses.filter((c) => !c.adjacent).length > maxClauses) return Infinity;
    const work = searchCost(storage, tenantId, clauses, tail, limit);
    // A search of at most FILTER_SAMPLE postings checks its candidates one by one and never lists the agent's
    // records (and leads by at most one of them, filterLeadMost).
    return query.agent_id === undefined || query.agent_id === null || work <= FILTER_SAMPLE ? work : work + filterListReadMost(work);
  }

  /**
   * A search without `q` by a type or a client, walking no more than the `newestWalk` newest records of its
   * range: its rows when they are all there (`limit` of them, or the range holds no more records than the
   * walk), else undefined, and a search thread walks on. The newest `limit` records that match among the
   * newest `newestWalk` are the newest `limit` that match at all, so the answer is the unbounded walk's.
   */
  private newestWithin(tenantId: string, query: SearchQuery): SearchRow[] | undefined {
    const edge = newestEdgeSql(query);
    const from = newestRecordsSql(query, { from: true });
    const next = this.statement(edge.sql).get(tenantId, ...edge.values, this.newestWalk) as { created_at: string; id: string } | undefined;
    if (!next) return this.newestRows(tenantId, query);
    const rows = this.rows(from.sql).all(tenantId, ...from.values, next.created_at, next.id, query.limit);
    return rows.length === query.limit ? rows : undefined;
  }

  private newestRows(tenantId: string, query: SearchQuery): SearchRow[] {
    // The record filters, as conditions on the table and their values in order; the tenant is checked apart.
    const { sql, values } = newestRecordsSql(query);
    return this.rows(sql).all(tenantId, ...values, query.limit);
  }

  private textRows(tenantId: string, query: SearchQuery, text: ParsedQuery, state: TenantState, storage: PostingStorage): SearchRow[] {
    if (isEmptyQuery(text)) return [];
    // The engine (shared/search) ranks document numbers, which are the records' seq; the filters are asked
    // only about a record that would enter the top `limit`. Superseded records are left out apart (filterOf).
    const { where: conditions, values } = filterConditions({ ...query, include_superseded: true });
    const { tail, upTo, superseded } = state;
    const filter = this.filterOf(tenantId, query, conditions, values, upTo, superseded && query.include_superseded !== true);
    const { hits, best } = searchScored(storage, tenantId, text, { k: query.limit, filter, ranking: RANKING, tail });
    if (hits.length === 0) return [];
    // The rank comes back in the row, which is then the search row as it is (no copy of a record a hit).
    const row = this.rows('SELECT *, ? AS rank FROM records WHERE seq = ? AND tenant_id = ?');
    const rows: SearchRow[] = [];
    for (const hit of hits) {
      const rank = rankFromScore(hit.score, best);
      // The hits come best first, so the first one below the cut-off ends them: the rest rank lower still.
      if (rank < (query.min_rank ?? 0)) break;
      const found = row.get(rank, hit.doc, tenantId);
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
    // A window is read from its newest record down when the filter has a `since` and no `until`: records are
    // numbered in the order they are written, so the ones new enough are at the top of the range, and a
    // range read from its bottom passed over every older one first (a rare word whose few records span the
    // tenant: 18 ms at a million records, docs/benchmarks.md).
    const newestFirst = query.since !== undefined && query.until === undefined ? ' ORDER BY m.seq DESC' : '';
    const any = this.statement(`SELECT 1 FROM records m INDEXED BY records_tenant_filters WHERE m.tenant_id = ? AND m.seq BETWEEN ? AND ?${where}${newestFirst} LIMIT 1`).pluck();
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
