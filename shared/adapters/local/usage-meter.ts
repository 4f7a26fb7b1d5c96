import type { Statement } from 'better-sqlite3';
import type { Usage } from '../../domain/tenant.js';
import type { UsageMeter } from '../../ports.js';
import { openQueryCounts, type Db } from './database.js';

/**
 * Check and count in one statement: the row only changes while the month's searches, the ones counted
 * here and the ones `usage.queries` held before the counts moved (`@before`), are under the quota.
 */
const COUNT_QUERY_SQL = `
  INSERT INTO query_counts (tenant_id, month, queries) SELECT @tenant, @month, 1 WHERE @before < @quota
  ON CONFLICT (tenant_id, month) DO UPDATE SET queries = queries + 1 WHERE queries + @before < @quota`;

export interface UsageMeterOptions {
  /** Opens the query counts' database, once, at the first count or listing (database.ts, openQueryCounts, by default). */
  openCounts?: (db: Db) => Db;
  /** A search counted at least this long after the oldest count not yet synced commits with an fsync. */
  syncEveryMs?: number;
  clock?: () => number;
}

/** How many tenant-months' counts from before the move a meter keeps read (they never change). */
const BEFORE_KEPT = 4096;

/**
 * Monthly usage counters on SQLite. The record count is written by SqliteRecordStore in the record's
 * transaction, in `usage.records`. The query count is kept in a database file of its own (database.ts,
 * openQueryCounts): it commits on every search, and a commit to the records' database makes every other
 * connection to it drop its page cache before its next read, so that each search's reads began cold
 * (counting in that file cost 0.065 ms a search over HTTP at 100 000 records, 8 % of it, and a tenth of
 * the server's CPU; docs/benchmarks.md). A tenant's searches of a month are the count in `query_counts`
 * plus what `usage.queries` held before the counts moved there, which nothing changes any more.
 *
 * The count does not wait for the disk: its file is in WAL mode with `synchronous = NORMAL`, so a count is
 * in the log, and survives a crash of the process, as soon as it returns; only a power cut (or an operating
 * system crash) can lose the counts since the log was last synced, and a count that comes `syncEveryMs`
 * (1 s) or more after the oldest count not yet synced commits with `synchronous = FULL`, which syncs the
 * log. So a power cut loses at most about a second of counted searches, and only while searches come in; a
 * process crash loses none. The check and the count are one statement under the file's write lock, so the
 * quota holds exactly (docs/architecture.md, "Durability").
 */
export class SqliteUsageMeter implements UsageMeter {
  private counts: { db: Db; count: Statement; month: Statement; tenantMonth: Statement } | null = null;
  /** What `usage.queries` held for a tenant-month before the counts moved (read once each). */
  private readonly before = new Map<string, number>();
  private readonly beforeOf: Statement;
  /** The `usage` rows of a month, of every tenant or of one. */
  private readonly usageOf: { all: Statement<[string], Usage>; tenant: Statement<[string, string], Usage> };
  /** When the oldest count that no fsync has covered yet was made; null when there is none. */
  private unsyncedSince: number | null = null;
  private readonly openCounts: (db: Db) => Db;
  private readonly syncEveryMs: number;
  private readonly clock: () => number;

  constructor(
    private readonly db: Db,
    { openCounts = openQueryCounts, syncEveryMs = 1000, clock = Date.now }: UsageMeterOptions = {},
  ) {
    this.beforeOf = db.prepare('SELECT queries FROM usage WHERE tenant_id = ? AND month = ?').pluck();
    this.usageOf = {
      all: db.prepare('SELECT tenant_id, month, records, queries FROM usage WHERE month = ?'),
      tenant: db.prepare('SELECT tenant_id, month, records, queries FROM usage WHERE month = ? AND tenant_id = ?'),
    };
    this.openCounts = openCounts;
    this.syncEveryMs = syncEveryMs;
    this.clock = clock;
  }

  async countQuery(tenantId: string, month: string, queryQuota: number): Promise<boolean> {
    const counts = this.countsDb();
    const before = this.queriesBefore(tenantId, month);
    const now = this.clock();
    // An in-memory database has nothing to sync.
    const sync = !counts.db.memory && this.unsyncedSince !== null && now - this.unsyncedSince >= this.syncEveryMs;
    if (sync) counts.db.pragma('synchronous = FULL');
    let counted: boolean;
    try {
      counted = counts.count.run({ tenant: tenantId, month, quota: queryQuota, before }).changes === 1;
    } finally {
      if (sync) counts.db.pragma('synchronous = NORMAL');
    }
    // A statement that changed nothing wrote nothing, so it synced nothing either.
    if (counted) {
      if (sync) this.unsyncedSince = null;
      else this.unsyncedSince ??= now;
    }
    return counted;
  }

  async list(month: string, tenantId?: string): Promise<Usage[]> {
    const rows = tenantId === undefined ? this.usageOf.all.all(month) : this.usageOf.tenant.all(month, tenantId);
    const counts = this.countsDb();
    const counted = (tenantId === undefined ? counts.month.all(month) : counts.tenantMonth.all(month, tenantId)) as { tenant_id: string; queries: number }[];
    const byTenant = new Map(rows.map((row) => [row.tenant_id, row]));
    for (const { tenant_id, queries } of counted) {
      const row = byTenant.get(tenant_id);
      if (row) row.queries += queries;
      else byTenant.set(tenant_id, { tenant_id, month, records: 0, queries });
    }
    return [...byTenant.values()].sort((a, b) => (a.tenant_id < b.tenant_id ? -1 : a.tenant_id > b.tenant_id ? 1 : 0));
  }

  /** Closes the counts' connection, if it opened one; the main connection is its owner's to close. */
  close(): void {
    if (this.counts && this.counts.db !== this.db) this.counts.db.close();
    this.counts = null;
  }

  private countsDb() {
    if (!this.counts) {
      const db = this.openCounts(this.db);
      this.counts = {
        db,
        count: db.prepare(COUNT_QUERY_SQL),
        month: db.prepare('SELECT tenant_id, queries FROM query_counts WHERE month = ?'),
        tenantMonth: db.prepare('SELECT tenant_id, queries FROM query_counts WHERE month = ? AND tenant_id = ?'),
      };
    }
    return this.counts;
  }

  private queriesBefore(tenantId: string, month: string): number {
    const key = `${tenantId} ${month}`;
    let before = this.before.get(key);
    if (before === undefined) {
      before = (this.beforeOf.get(tenantId, month) as number | undefined) ?? 0;
      if (this.before.size >= BEFORE_KEPT) this.before.clear();
      this.before.set(key, before);
    }
    return before;
  }
}
