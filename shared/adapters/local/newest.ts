/**
 * `search_newest`: per tenant and block of 1 024 seq, the newest `created_at` of the tenant's merged
 * records in the block, an upper bound that never goes down (a deleted record leaves it as it was).
 *
 * It lets a search filtered by `since` skip a window of documents whose blocks hold no record that new
 * without reading the window's records (search-index.ts): before it, such a search read the filters' index
 * entries of every older record once, which made `since` the slowest filter (32 ms at p50 in a
 * 500 000-record tenant, docs/benchmarks.md). The merge keeps it with the merge mark (search-merge.ts), so
 * it covers exactly the records up to the mark; a window above the mark (the tail) is never skipped by it.
 */

/** Records per block: 2^NEWEST_BLOCK_BITS consecutive seq. */
export const NEWEST_BLOCK_BITS = 10;

/** The block of a record's seq. */
export function newestBlockOf(seq: number): number {
  return Math.floor(seq / 2 ** NEWEST_BLOCK_BITS);
}

/** Raises a block's newest time to `?3` if it is newer: (tenant, block, created_at). */
export const NEWEST_UPSERT_SQL = `
  INSERT INTO search_newest (tenant_id, block, newest) VALUES (?, ?, ?)
  ON CONFLICT (tenant_id, block) DO UPDATE SET newest = max(newest, excluded.newest)`;

/** The table, and its rows for the records already merged (a database upgraded to it). */
export const NEWEST_TABLE_SQL = `
  CREATE TABLE search_newest (
    tenant_id TEXT NOT NULL,
    block INTEGER NOT NULL,
    newest TEXT NOT NULL,
    PRIMARY KEY (tenant_id, block)
  ) STRICT, WITHOUT ROWID;
  INSERT INTO search_newest (tenant_id, block, newest)
    SELECT tenant_id, seq >> ${NEWEST_BLOCK_BITS}, max(created_at) FROM records
    WHERE seq <= (SELECT merged_upto FROM search_state) GROUP BY tenant_id, seq >> ${NEWEST_BLOCK_BITS};
`;
