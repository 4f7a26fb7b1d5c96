import { isEmptyQuery } from '../../domain/query-parse.js';
import { RANKING, rankFromScore } from '../../domain/rank.js';
import type { SearchHit } from '../../domain/record.js';
import type { SearchIndex, SearchQuery } from '../../ports.js';
import type { Statement } from 'better-sqlite3';
import type { Db } from './database.js';
import { newestBlockOf } from './newest.js';
import { SqlitePostingStorage } from './posting-storage.js';
import { filterConditions, toSearchHit, type RecordRow, type SearchRow } from './rows.js';
import { lowerBound } from '../../search/postings.js';
import { searchCost } from '../../search/cost.js';
import { clausesOf, type TextQuery } from '../../search/query.js';
import { searchIndex, type SearchOptions } from '../../search/searcher.js';
import type { Tail } from '../../search/tail.js';
import { TailCache } from './tail-cache.js';

/**
 * Search on the engine's index (shared/search) and its tail, the records above the merge mark
 * (search-merge.ts), so a record is found as soon as its write has returned; the records without `q` come
 * from the records table. Each search runs in one read transaction: the index, the merge mark, the tail and
 * the records it returns are one snapshot, whatever a merge or a write commits meanwhile. The engine ranks
 * with the domain's RANKING, as OpenSearch does.
 */
/** Candidates a search by agent checks one by one before it decides whether to take the agent's records whole. */
const AGENT_SET_AFTER = 64;
/**
 * The most records an agent may have, estimated from the candidates checked so far, for a search to take
 * them whole: reading an agent's records from their index costs about 0.2 µs each (1 ms for 6 500, 18 ms for
 * 80 000 in a 500 000-record tenant), and an agent that many candidates belong to rejects few of them, so
 * checking them one by one then costs less.
 */
const AGENT_SET_MAX = 16_384;
/** An agent with at most this many records has them read before the search, which may then score only them (`among`). */
const AMONG_MAX = 4096;

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

  /** The tenant's tail and the merge mark, as of the current transaction (one read of search_state). */
  private tailOf(tenantId: string): { tail: Tail; upTo: number } {
    const { upTo, gen } = this.state.get() as { upTo: number; gen: number };
    return { tail: this.tails.tailOf(tenantId, upTo, gen), upTo };
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
   * with more than `maxClauses` clauses is not counted (Infinity). It stops counting past `limit`. The search
   * pool runs a search this bounds small on the caller's thread.
   */
  workBound(tenantId: string, text: TextQuery, maxClauses: number, limit = Infinity): number {
    const clauses = clausesOf(text);
    if (clauses.length > maxClauses) return Infinity;
    return this.inSnapshot(() => searchCost(this.postings, tenantId, clauses, this.tailOf(tenantId).tail, limit));
  }

  private rowsOf(tenantId: string, query: SearchQuery): SearchRow[] {
    // The record filters, as conditions on a table alias and their values in order; the tenant is checked apart.
    const { where: conditions, values } = filterConditions(query);
    const on = (alias: string) => conditions.map((c) => ` AND ${alias}.${c}`).join('');

    if (query.text === null) {
      const rows = this.statement(
        `SELECT r.* FROM records r WHERE r.tenant_id = ?${on('r')} ORDER BY r.created_at DESC, r.id DESC LIMIT ?`,
      ).all(tenantId, ...values, query.limit) as RecordRow[];
      return rows.map((row) => ({ ...row, rank: 0 }));
    }
    if (isEmptyQuery(query.text)) return [];

    // The engine (shared/search) ranks document numbers, which are the records' seq; the filters are asked
    // only about a record that would enter the top `limit`.
    const { tail, upTo } = this.tailOf(tenantId);
    const filters = this.filtersOf(tenantId, query, conditions, values, upTo, tail);
    const hits = searchIndex(this.postings, tenantId, query.text, { k: query.limit, ...filters, ranking: RANKING, tail });
    if (hits.length === 0) return [];
    const row = this.statement('SELECT * FROM records WHERE seq = ? AND tenant_id = ?');
    const rows: SearchRow[] = [];
    for (const hit of hits) {
      const found = row.get(hit.doc, tenantId) as RecordRow | undefined;
      if (found) rows.push({ ...found, rank: rankFromScore(hit.score) });
    }
    return rows;
  }

  /**
   * The record filters as the engine asks them: about a window of documents (may any pass?), and one
   * document at a time, in increasing order, each on the covering index `records_tenant_filters` (one range or one
   * lookup). A search by agent whose candidates keep being rejected (an agent has a small part of a
   * tenant's records, and a common word has thousands of candidates) takes the agent's records from their
   * own index (`records_tenant_agent_created`) after AGENT_SET_AFTER lookups, and answers from them. A
   * window of merged records (at or below `upTo`, the merge mark of this snapshot) that `since` rules out by
   * its blocks' newest times (newest.ts) is skipped without reading its records.
   */
  private filtersOf(
    tenantId: string,
    query: SearchQuery,
    conditions: string[],
    values: unknown[],
    upTo: number,
    tail: Tail,
  ): Pick<SearchOptions, 'accept' | 'acceptsAny' | 'among'> {
    if (conditions.length === 0) return {};
    const where = conditions.map((c) => ` AND m.${c}`).join('');
    const check = this.statement(`SELECT 1 FROM records m INDEXED BY records_tenant_filters WHERE m.tenant_id = ? AND m.seq = ?${where}`).pluck();
    const any = this.statement(`SELECT 1 FROM records m INDEXED BY records_tenant_filters WHERE m.tenant_id = ? AND m.seq BETWEEN ? AND ?${where} LIMIT 1`).pluck();
    const lookup = (seq: number) => check.get(tenantId, seq, ...values) !== undefined;
    const since = query.since;
    const newer =
      since === undefined ? null : this.statement('SELECT 1 FROM search_newest WHERE tenant_id = ? AND block BETWEEN ? AND ? AND newest >= ? LIMIT 1').pluck();
    const mayBeNewEnough = (from: number, to: number) =>
      newer === null || to > upTo || newer.get(tenantId, newestBlockOf(from), newestBlockOf(to), since) !== undefined;
    const anyIn = (from: number, to: number) => mayBeNewEnough(from, to) && any.get(tenantId, from, to, ...values) !== undefined;
    const agent = query.agent_id;
    if (agent === undefined || agent === null) return { accept: lookup, acceptsAny: anyIn };
    const others = conditions.length > 1;
    let asked = 0;
    let passed = 0;
    /** Whether the agent's records are to be taken whole: undecided until AGENT_SET_AFTER candidates were checked. */
    let takeWhole: boolean | null = null;
    let mine: Uint32Array | null = null;
    // An agent of few records, when the engine asks: all of them at once, which it then reads the clauses at.
    const among = (most: number) => {
      const limit = Math.min(most, AMONG_MAX);
      const few = this.statement(
        'SELECT seq FROM records INDEXED BY records_tenant_agent_created WHERE tenant_id = ? AND agent_id = ? LIMIT ?',
      ).pluck().all(tenantId, agent, limit + 1) as number[];
      if (few.length > limit) return null;
      return (mine = Uint32Array.from(few).sort());
    };
    const decided = () => {
      if (takeWhole === null && asked >= AGENT_SET_AFTER) {
        const records = (this.postings.stats(tenantId)?.docs ?? 0) + tail.stats.docs;
        takeWhole = (passed / asked) * records <= AGENT_SET_MAX;
      }
      return takeWhole;
    };
    const agentSeqs = () =>
      (mine ??= Uint32Array.from(
        this.statement('SELECT seq FROM records INDEXED BY records_tenant_agent_created WHERE tenant_id = ? AND agent_id = ?').pluck().all(tenantId, agent) as number[],
      ).sort());
    return {
      among,
      accept: (seq) => {
        if (!mine && !decided()) {
          asked++;
          const ok = lookup(seq);
          if (ok) passed++;
          return ok;
        }
        const seqs = agentSeqs();
        const i = lowerBound(seqs, seqs.length, seq);
        return i < seqs.length && seqs[i] === seq && (!others || lookup(seq));
      },
      acceptsAny: (from, to) => {
        if (!mine) return anyIn(from, to);
        const i = lowerBound(mine, mine.length, from);
        return i < mine.length && mine[i]! <= to && (!others || anyIn(from, to));
      },
    };
  }
}
