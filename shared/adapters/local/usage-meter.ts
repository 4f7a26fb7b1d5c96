import type { Usage } from '../../domain/tenant.js';
import type { UsageMeter } from '../../ports.js';
import type { Db } from './database.js';

/** Monthly usage counters on SQLite; the record count is written by SqliteRecordStore in its transaction. */
export class SqliteUsageMeter implements UsageMeter {
  private readonly countStmt;

  constructor(private readonly db: Db) {
    // Check and count in one statement: the row only changes while it is under the quota.
    this.countStmt = db.prepare<{ tenant: string; month: string; quota: number }>(`
      INSERT INTO usage (tenant_id, month, queries) SELECT @tenant, @month, 1 WHERE @quota > 0
      ON CONFLICT (tenant_id, month) DO UPDATE SET queries = queries + 1 WHERE queries < @quota`);
  }

  async countQuery(tenantId: string, month: string, queryQuota: number): Promise<boolean> {
    return this.countStmt.run({ tenant: tenantId, month, quota: queryQuota }).changes === 1;
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
}
