import type { StoredRecord } from '../../domain/record.js';
import type { DocumentIndex, IndexChange } from '../../ports.js';
import type { Db } from './db.js';
import { indexChanges } from './index-changes.js';
import { newestBlockOf } from './newest.js';
import { SqlitePostingStorage } from './posting-storage.js';
import { recordStatements } from './record-statements.js';
import { recordParams } from './rows.js';
import type { SearchMerger } from './search-merger.js';

/**
 * The write side of the SQLite search index, for the AWS-shaped local mode: the indexer feeds it from the
 * DynamoDB Local stream, and `SqliteSearchIndex` reads the same records and search tables.
 * Every change is idempotent by tenant and record id, so a replayed stream leaves the index as it was.
 *
 * A new record is stored, and is the index's tail until the merger takes it in (search-merge.ts). A new text
 * or a delete changes the index as index-changes.ts says.
 */
export class SqliteDocumentIndex implements DocumentIndex {
  private readonly applyTx;

  constructor(
    db: Db,
    private readonly merger?: Pick<SearchMerger, 'wake'>,
  ) {
    const sql = recordStatements(db);
    const postings = new SqlitePostingStorage(db);
    // The index follows the text exactly: a record is added with its text and removed with the text it was
    // added with, so every statistic stays exact. A classification leaves the text, and the index, as it was.
    const changeIndex = indexChanges(db);
    const change = (tenantId: string, seq: number, r: Pick<StoredRecord, 'title' | 'body'>, sign: 1 | -1) =>
      changeIndex(tenantId, [{ doc: seq, title: r.title, body: r.body }], sign);

    const upsert = (record: StoredRecord): void => {
      const row = recordParams(record);
      const existing = sql.selectIndexedText.get(record.tenant_id, record.id);
      if (!existing) {
        sql.insertRecord.run(row);
        return;
      }
      sql.updateRecord.run({ ...row, seq: existing.seq });
      // A merged record's block keeps a bound on its records' creation times (newest.ts); a stream that moves
      // created_at later (none should) must not leave it below.
      if (existing.seq <= postings.mergedUpTo()) sql.raiseNewest.run(record.tenant_id, newestBlockOf(existing.seq), record.created_at);
      if (existing.title === record.title && existing.body === record.body) return;
      change(record.tenant_id, existing.seq, existing, -1);
      change(record.tenant_id, existing.seq, record, +1);
    };

    const remove = (tenantId: string, id: string): void => {
      const existing = sql.selectIndexedText.get(tenantId, id);
      if (!existing) return;
      change(tenantId, existing.seq, existing, -1);
      sql.deleteRecord.run(existing.seq);
    };

    // Called inside the outer transaction, better-sqlite3 runs this one as a savepoint: a change that
    // fails rolls back alone, and the others still commit.
    const applyOne = db.transaction((change: IndexChange): void => {
      if (change.kind === 'upsert') upsert(change.record);
      else remove(change.tenant_id, change.id);
    });

    this.applyTx = db.transaction((changes: IndexChange[]): (string | null)[] =>
      changes.map((change) => {
        try {
          applyOne(change);
          return null;
        } catch (error) {
          return error instanceof Error ? error.message : String(error);
        }
      }),
    );
  }

  /** Applies the changes in order in one transaction; a change that fails is rolled back alone and reports why. */
  async apply(changes: IndexChange[]): Promise<(string | null)[]> {
    const outcomes = this.applyTx.immediate(changes);
    this.merger?.wake();
    return outcomes;
  }
}
