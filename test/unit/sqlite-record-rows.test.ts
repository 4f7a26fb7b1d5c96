import { openDatabase } from '../../shared/adapters/local/database.js';
import type { Db } from '../../shared/adapters/local/db.js';
import { INSERT_RECORD, UPDATE_RECORD } from '../../shared/adapters/local/record-sql.js';
import { recordStatements } from '../../shared/adapters/local/record-statements.js';
import { RECORD_COLUMNS, recordParams, RowReader, toStoredRecord, type RecordRow } from '../../shared/adapters/local/rows.js';
import { newRecord } from '../../shared/domain/record.js';
import { STORED_FIELDS } from '../../shared/domain/record-schema.js';

let db: Db;
beforeEach(() => {
  db = openDatabase(':memory:');
});
afterEach(() => db.close());

const record = {
  ...newRecord('tenant', { agent_id: 'a', type: 'fact', title: 'T', body: 'B', client: null, metadata: { deep: { list: [1, 'x', null] } } }, new Date('2026-11-21T10:00:00.123Z')),
  classification: { type: 'signal' as const, confidence: 0.25, model: 'm', classified_at: '2026-11-21T10:00:01.000Z' },
};

describe('the records table and the record schema', () => {
  test('the table has a column for each field of the stored record, and seq', () => {
    const columns = (db.prepare('SELECT name FROM pragma_table_info(\'records\')').pluck().all() as string[]).sort();
    expect(columns).toEqual(['seq', ...STORED_FIELDS].sort());
    expect([...RECORD_COLUMNS]).toEqual([...STORED_FIELDS]);
  });

  test('a row is written from every field and maps back to the same record', () => {
    for (const column of RECORD_COLUMNS) expect(INSERT_RECORD).toContain(`@${column}`);
    recordStatements(db).insertRecord.run(recordParams(record));
    const row = db.prepare('SELECT * FROM records WHERE id = ?').get(record.id) as RecordRow;
    expect(row.metadata).toBe(JSON.stringify(record.metadata));
    expect(toStoredRecord(row)).toEqual(record);
    expect(Object.keys(toStoredRecord(row))).toEqual([...STORED_FIELDS]);
  });

  test('an update rewrites every field but the id and the tenant', () => {
    for (const column of RECORD_COLUMNS) expect(UPDATE_RECORD.includes(`@${column}`)).toBe(column !== 'id' && column !== 'tenant_id');
  });

  test('the statements are prepared once per connection', () => {
    expect(recordStatements(db)).toBe(recordStatements(db));
    const other = openDatabase(':memory:');
    try {
      expect(recordStatements(other)).not.toBe(recordStatements(db));
    } finally {
      other.close();
    }
  });

  test("a RowReader's rows are better-sqlite3's own, key for key and in order, whatever the statement", () => {
    recordStatements(db).insertRecord.run(recordParams(record));
    recordStatements(db).insertRecord.run(recordParams({ ...record, id: 'second', metadata: null, classification: null }));
    for (const sql of [
      'SELECT *, ? AS rank FROM records WHERE tenant_id = ? ORDER BY seq',
      // A column named twice: the later one wins, in both.
      'SELECT r.*, ? AS rank, 7 AS title FROM records r WHERE r.tenant_id = ? ORDER BY seq DESC',
    ]) {
      const own = db.prepare(sql);
      const reader = new RowReader<Record<string, unknown>>(db.prepare(sql));
      const rows = reader.all(0.5, 'tenant');
      expect(rows).toHaveLength(2);
      expect(JSON.stringify(rows)).toBe(JSON.stringify(own.all(0.5, 'tenant')));
      expect(JSON.stringify(reader.get(0.5, 'tenant'))).toBe(JSON.stringify(own.get(0.5, 'tenant')));
      expect(reader.get(0.5, 'nobody')).toBeUndefined();
      expect(reader.all(0.5, 'nobody')).toEqual([]);
    }
  });
});
