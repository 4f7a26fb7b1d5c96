import type { Statement } from 'better-sqlite3';
import type { Usage } from '../../domain/tenant.js';
import type { UsageMeter } from '../../ports.js';
import { openRelaxedConnection, type Db } from './database.js';

/** Check and count in one statement: the row only changes while it is under the quota. */
const COUNT_QUERY_SQL = `
  INSERT INTO usage (tenant_id, month, queries) SELECT @tenant, @month, 1 WHERE @quota > 0
  ON CONFLICT (tenant_id, month) DO UPDATE SET queries = queries + 1 WHERE queries < @quota`;

export interface UsageMeterOptions {
  /**
   * Opens the connection the query counter commits on, once, at the first search counted: by default a
   * second connection to the same file with `synchronous = NORMAL` (database.ts, openRelaxedConnection).
   */
  openCounter?: (db: Db) => Db;
  /** A search counted at least this long after the oldest count not yet synced commits with an fsync. */
  syncEveryMs?: number;
  clock?: () => number;
}

/**
 * Monthly usage counters on SQLite; the record count is written by SqliteRecordStore in its transaction.
 *
 * The query counter runs on every search, on the server's thread, so it does not wait for the disk: it
 * commits on a connection of its own with `synchronous = NORMAL`. In WAL mode such a commit is in the log,
 * and so survives a crash of the process, as soon as it returns; only a power cut (or an operating system
 * crash) can lose the counts committed since the log was last synced. Any commit of the main connection
 * syncs the log (every write, the classifier's job claims), and so does a checkpoint; and a count that comes
 * `syncEveryMs` (1 s) or more after the oldest count not yet synced commits on the main connection, with
 * its fsync. So a power cut loses at most about a second of counted searches, and only while searches come
 * in; a process crash loses none. The check and the count stay one statement under SQLite's write lock,
 * whichever connection runs it, so the quota holds exactly (docs/architecture.md, "Durability").
 */
export class SqliteUsageMeter implements UsageMeter {
  /** The counter on the main connection (synchronous = FULL): the count that syncs the log. */
  private readonly syncedCount: Statement;
  private relaxed: { db: Db; count: Statement } | null = null;
  /** When the oldest count that no fsync has covered yet was made; null when there is none. */
  private unsyncedSince: number | null = null;
  private readonly openCounter: (db: Db) => Db;
  private readonly syncEveryMs: number;
  private readonly clock: () => number;

  constructor(
    private readonly db: Db,
    { openCounter = openRelaxedConnection, syncEveryMs = 1000, clock = Date.now }: UsageMeterOptions = {},
  ) {
    this.syncedCount = db.prepare(COUNT_QUERY_SQL);
    this.openCounter = openCounter;
    this.syncEveryMs = syncEveryMs;
    this.clock = clock;
  }

  async countQuery(tenantId: string, month: string, queryQuota: number): Promise<boolean> {
    const now = this.clock();
    const sync = this.unsyncedSince !== null && now - this.unsyncedSince >= this.syncEveryMs;
    const statement = sync ? this.syncedCount : this.relaxedCount();
    const counted = statement.run({ tenant: tenantId, month, quota: queryQuota }).changes === 1;
    // A statement that changed nothing wrote nothing, so it synced nothing either.
    if (counted) {
      if (sync || statement === this.syncedCount) this.unsyncedSince = null;
      else this.unsyncedSince ??= now;
    }
    return counted;
  }

  async list(month: string, tenantId?: string): Promise<Usage[]> {
    const where = tenantId === undefined ? 'month = ?' : 'month = ? AND tenant_id = ?';
    const args = tenantId === undefined ? [month] : [month, tenantId];
    return this.db
      .prepare<unknown[], Usage>(
        `SELECT tenant_id, month, records, queries FROM usage WHERE ${where} ORDER BY tenant_id`,
      )
      .all(...args);
  }

  /** Closes the counter's own connection, if it opened one; the main connection is its owner's to close. */
  close(): void {
    if (this.relaxed && this.relaxed.db !== this.db) this.relaxed.db.close();
    this.relaxed = null;
  }

  private relaxedCount(): Statement {
    if (!this.relaxed) {
      const db = this.openCounter(this.db);
      this.relaxed = { db, count: db === this.db ? this.syncedCount : db.prepare(COUNT_QUERY_SQL) };
    }
    return this.relaxed.count;
  }
}
