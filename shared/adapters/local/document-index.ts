import { searchableText } from '../../domain/query-parse.js';
import type { StoredRecord } from '../../domain/record.js';
import type { DocumentIndex, IndexChange } from '../../ports.js';
import type { Db } from './database.js';
import { tenantToken } from './rows.js';

/**
 * The write side of the SQLite search index, for the AWS-shaped local mode: the indexer feeds it from the
 * DynamoDB Local stream, and `SqliteSearchIndex` reads the same `records` and `records_fts` tables.
 * Every change is idempotent by record id, so a replayed stream leaves the index as it was.
 */
export class SqliteDocumentIndex implements DocumentIndex {
  private readonly applyTx;

  constructor(db: Db) {
    const findSeq = db.prepare<[string], { seq: number; tenant_id: string; title: string; body: string }>(
      'SELECT seq, tenant_id, title, body FROM records WHERE id = ?',
    );
    const insertRecord = db.prepare(`
      INSERT INTO records (id, tenant_id, agent_id, type, title, body, client, metadata, created_at, classification)
      VALUES (@id, @tenant_id, @agent_id, @type, @title, @body, @client, @metadata, @created_at, @classification)`);
    const updateRecord = db.prepare(`
      UPDATE records SET agent_id = @agent_id, type = @type, title = @title, body = @body, client = @client,
        metadata = @metadata, created_at = @created_at, classification = @classification
      WHERE seq = @seq`);
    const deleteRecord = db.prepare<[number]>('DELETE FROM records WHERE seq = ?');
    const insertFts = db.prepare<[number | bigint, string, string, string]>(
      'INSERT INTO records_fts (rowid, title, body, tenant) VALUES (?, ?, ?, ?)',
    );
    // contentless_delete = 1 is what lets a contentless FTS5 table delete a row by rowid alone. Such a
    // delete does not take the row's tokens off the column statistics bm25() reads, so ranks drift a little
    // after it; the service's own MODIFYs (classifications) therefore leave the FTS row alone, and only an
    // operator's text change or delete pays that price.
    const deleteFts = db.prepare<[number]>('DELETE FROM records_fts WHERE rowid = ?');
    const indexed = (r: Pick<StoredRecord, 'title' | 'body' | 'tenant_id'>) =>
      [searchableText(r.title), searchableText(r.body), tenantToken(r.tenant_id)] as const;

    const upsert = (record: StoredRecord): void => {
      const row = {
        ...record,
        metadata: record.metadata === null ? null : JSON.stringify(record.metadata),
        classification: record.classification === null ? null : JSON.stringify(record.classification),
      };
      const fts = indexed(record);
      const existing = findSeq.get(record.id);
      if (!existing) {
        const { lastInsertRowid } = insertRecord.run(row);
        insertFts.run(lastInsertRowid, ...fts);
        return;
      }
      // Ids are UUIDv7, so this only happens on a corrupt stream; never let one tenant's write move another's record.
      if (existing.tenant_id !== record.tenant_id) throw new Error('the record id belongs to another tenant');
      updateRecord.run({ ...row, seq: existing.seq });
      // A classification leaves the text as it was: the FTS row stays, and so do the statistics.
      if (existing.title === record.title && existing.body === record.body) return;
      deleteFts.run(existing.seq);
      insertFts.run(existing.seq, ...fts);
    };

    const remove = (tenantId: string, id: string): void => {
      const existing = findSeq.get(id);
      if (!existing || existing.tenant_id !== tenantId) return;
      deleteFts.run(existing.seq);
      deleteRecord.run(existing.seq);
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
    return this.applyTx.immediate(changes);
  }
}
