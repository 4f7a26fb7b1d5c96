import type { StoredRecord } from '../../domain/record.js';
import type { DocumentIndex, IndexChange } from '../../ports.js';
import type { Db } from './database.js';
import { SqlitePostingStorage } from './posting-storage.js';
import { addDocuments, removeDocuments } from '../../search/writer.js';

/**
 * The write side of the SQLite search index, for the AWS-shaped local mode: the indexer feeds it from the
 * DynamoDB Local stream, and `SqliteSearchIndex` reads the same records and search tables.
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
    const postings = new SqlitePostingStorage(db);
    // The index follows the text exactly: a record is added with its text and removed with the text it was
    // added with, so every statistic stays exact. A classification leaves the text, and the index, as it was.
    const index = (seq: number | bigint, r: Pick<StoredRecord, 'title' | 'body' | 'tenant_id'>) =>
      addDocuments(postings, r.tenant_id, [{ doc: Number(seq), title: r.title, body: r.body }]);
    const unindex = (seq: number, r: Pick<StoredRecord, 'title' | 'body' | 'tenant_id'>) =>
      removeDocuments(postings, r.tenant_id, [{ doc: seq, title: r.title, body: r.body }]);

    const upsert = (record: StoredRecord): void => {
      const row = {
        ...record,
        metadata: record.metadata === null ? null : JSON.stringify(record.metadata),
        classification: record.classification === null ? null : JSON.stringify(record.classification),
      };
      const existing = findSeq.get(record.id);
      if (!existing) {
        const { lastInsertRowid } = insertRecord.run(row);
        index(lastInsertRowid, record);
        return;
      }
      // Ids are UUIDv7, so this only happens on a corrupt stream; never let one tenant's write move another's record.
      if (existing.tenant_id !== record.tenant_id) throw new Error('the record id belongs to another tenant');
      updateRecord.run({ ...row, seq: existing.seq });
      if (existing.title === record.title && existing.body === record.body) return;
      unindex(existing.seq, existing);
      index(existing.seq, record);
    };

    const remove = (tenantId: string, id: string): void => {
      const existing = findSeq.get(id);
      if (!existing || existing.tenant_id !== tenantId) return;
      unindex(existing.seq, existing);
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
