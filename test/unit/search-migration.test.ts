import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS } from '../../shared/adapters/local/database.js';
import { openSqliteAdapters } from '../../shared/adapters/local/index.js';
import { NEWEST_TABLE_SQL } from '../../shared/adapters/local/newest.js';
import { BLOCK_GENERATION_SQL } from '../../shared/adapters/local/posting-storage.js';
import type { InlineMerger } from '../../shared/adapters/local/search-merger.js';
import { parseQuery } from '../../shared/domain/query-parse.js';
import { indexChanges } from '../../shared/adapters/local/index-changes.js';
import { SearchMerge } from '../../shared/adapters/local/search-merge.js';
import { indexProblems } from '../support/index-invariants.js';

/**
 * The upgrade from FTS5 to the engine of shared/search: a database as the code before it wrote it
 * (schema version 2, records and their FTS5 rows) is indexed on open, with progress lines, losing nothing.
 */

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memory-migration-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const TENANTS = ['0193a000-0000-7000-8000-00000000000a', '0193a000-0000-7000-8000-00000000000b'];

/** A version-2 database with `count` records spread over two tenants, written as that version did. */
function versionTwoDatabase(file: string, count: number): void {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  for (const sql of MIGRATIONS.slice(0, 2)) db.exec(sql);
  db.pragma('user_version = 2');
  const insert = db.prepare(`INSERT INTO records (id, tenant_id, agent_id, type, title, body, client, metadata, created_at)
                             VALUES (?, ?, 'agent', 'fact', ?, ?, NULL, NULL, ?)`);
  const fts = db.prepare('INSERT INTO records_fts (rowid, title, body, tenant) VALUES (?, ?, ?, ?)');
  db.transaction(() => {
    for (let i = 1; i <= count; i++) {
      const tenant = TENANTS[i % 2]!;
      const title = i % 100 === 0 ? `Dark mode note ${i}` : `Record number ${i}`;
      const { lastInsertRowid } = insert.run(`id-${i}`, tenant, title, `body of record ${i} about deploys`, new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString());
      fts.run(lastInsertRowid, title, `body of record ${i} about deploys`, 't' + tenant.replace(/-/g, ''));
    }
  })();
  db.close();
}

test('a version-2 database is indexed on open, with progress lines, and every record is found', async () => {
  const file = join(dir, 'memory.db');
  versionTwoDatabase(file, 12_000);
  const lines: string[] = [];
  const sqlite = openSqliteAdapters(file, { progress: (line) => lines.push(line) });
  try {
    expect(lines[0]).toBe(`database: migrating from schema version 2 to ${MIGRATIONS.length}`);
    expect(lines[1]).toMatch(new RegExp(`^database: migrated to schema version ${MIGRATIONS.length} in \\d+\\.\\d s$`));
    expect(lines[2]).toBe('building the search index of 12000 records');
    expect(lines.some((l) => /^search index: 5000 of 12000 records \(42 %\)$/.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/^search index built: 12000 records in \d+\.\d s$/);
    expect(sqlite.db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'records_fts'").pluck().get()).toBe(0);
    expect(sqlite.db.prepare('SELECT merged_upto FROM search_state').pluck().get()).toBe(12_000);
    const hits = await sqlite.search.search(TENANTS[0]!, { text: parseQuery('dark mode'), limit: 100 });
    // Every hundredth record is a dark-mode note, and all of them are the first tenant's (even numbers).
    expect(hits).toHaveLength(100);
    expect(hits.every((h) => h.tenant_id === TENANTS[0] && h.title.startsWith('Dark mode'))).toBe(true);
    const all = await sqlite.search.search(TENANTS[1]!, { text: parseQuery('deploys'), limit: 100 });
    expect(all).toHaveLength(100);
    expect(await sqlite.search.search(TENANTS[1]!, { text: parseQuery('dark'), limit: 100 })).toEqual([]);
    expect(sqlite.db.prepare('SELECT tenant, docs FROM search_tenants ORDER BY tenant').all()).toEqual(
      TENANTS.map((tenant) => ({ tenant, docs: 6000 })),
    );
    expect(newestRows(sqlite.db)).toEqual(expectedNewest(sqlite.db));
  } finally {
    sqlite.close();
  }
  // Opening again builds nothing.
  const again: string[] = [];
  openSqliteAdapters(file, { progress: (line) => again.push(line) }).close();
  expect(again).toEqual([]);
});

/** search_newest as it is, and as the records say it must be (newest.ts). */
const newestRows = (db: Database.Database) => db.prepare('SELECT tenant_id, block, newest FROM search_newest ORDER BY 1, 2').all();
const expectedNewest = (db: Database.Database) =>
  db.prepare('SELECT tenant_id, seq >> 10 AS block, max(created_at) AS newest FROM records GROUP BY 1, 2 ORDER BY 1, 2').all();

test('a database of the engine before search_newest gets it, for every merged record, on open', async () => {
  const file = join(dir, 'memory.db');
  versionTwoDatabase(file, 3000);
  const merged = openSqliteAdapters(file);
  (merged.merger as InlineMerger).mergeAll();
  merged.close();
  const db = new Database(file);
  // Back to the schema before search_newest: without it, and with the listing indexes of then.
  db.exec(`
    DROP TRIGGER api_keys_auth_update;
    DROP TRIGGER api_keys_auth_delete;
    DROP TRIGGER tenants_auth_update;
    DROP TRIGGER tenants_auth_delete;
    DROP TABLE auth_changes;
    DROP TRIGGER search_blocks_updated;
    DROP TRIGGER search_blocks_deleted;
    DROP TRIGGER search_positions_updated;
    DROP TRIGGER search_positions_deleted;
    ALTER TABLE search_state DROP COLUMN block_gen;
    DROP TRIGGER records_seq_moves_to_new;
    DROP TRIGGER records_seq_move_counter;
    DROP INDEX records_superseded;
    ALTER TABLE records DROP COLUMN version;
    ALTER TABLE records DROP COLUMN updated_at;
    ALTER TABLE records DROP COLUMN superseded_by;
    DROP TABLE service_secrets;
    DROP TABLE search_newest;
    DROP TRIGGER records_seq_is_new;
    DROP TRIGGER records_seq_counter;
    ALTER TABLE search_state DROP COLUMN last_seq;
    DROP INDEX records_tenant_created;
    DROP INDEX records_tenant_agent_created;
    DROP INDEX classification_jobs_record;
    ALTER TABLE api_keys DROP COLUMN scopes;
    ALTER TABLE api_keys DROP COLUMN agent_id;
    ALTER TABLE api_keys DROP COLUMN expires_at;
    ALTER TABLE api_keys DROP COLUMN last_used_on;
    CREATE INDEX records_tenant_recent ON records(tenant_id, created_at DESC, seq DESC);
    CREATE INDEX records_tenant_agent_recent ON records(tenant_id, agent_id, created_at DESC, seq DESC);
  `);
  db.pragma(`user_version = ${MIGRATIONS.indexOf(NEWEST_TABLE_SQL)}`);
  db.close();
  // The later migrations include the analyzer's rebuild, so the index is merged again from the start.
  const sqlite = openSqliteAdapters(file, { progress: () => undefined });
  (sqlite.merger as InlineMerger).mergeAll();
  try {
    expect(newestRows(sqlite.db)).toHaveLength(6);
    expect(newestRows(sqlite.db)).toEqual(expectedNewest(sqlite.db));
  } finally {
    sqlite.close();
  }
});

test('a database of before the listing gets its listing indexes on open, and lists in (created_at, id) order', async () => {
  const file = join(dir, 'memory.db');
  versionTwoDatabase(file, 300);
  const sqlite = openSqliteAdapters(file);
  try {
    const indexes = sqlite.db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'records' ORDER BY name").pluck().all();
    expect(indexes).toEqual(expect.arrayContaining(['records_tenant_agent_created', 'records_tenant_created']));
    expect(indexes).not.toContain('records_tenant_recent');
    const plan = sqlite.db
      .prepare("EXPLAIN QUERY PLAN SELECT * FROM records WHERE tenant_id = 'x' AND (created_at, id) < ('a', 'b') ORDER BY created_at DESC, id DESC LIMIT 5")
      .all() as { detail: string }[];
    expect(plan.map((p) => p.detail).join('\n')).toMatch(/USING INDEX records_tenant_created/);
    expect(plan.map((p) => p.detail).join('\n')).not.toMatch(/TEMP B-TREE/);
  } finally {
    sqlite.close();
  }
});

test('a build that stopped half-way resumes where it stopped', async () => {
  const file = join(dir, 'memory.db');
  versionTwoDatabase(file, 11_000);
  // Stop after the first batch: the progress callback throws, as a crash would end the process.
  expect(() =>
    openSqliteAdapters(file, {
      progress: (line) => {
        if (line.startsWith('search index: 5000')) throw new Error('crash');
      },
    }),
  ).toThrow('crash');
  const raw = new Database(file);
  expect(raw.prepare('SELECT merged_upto FROM search_state').pluck().get()).toBe(5000);
  raw.close();
  const darkCounts = (sqlite: ReturnType<typeof openSqliteAdapters>) =>
    Promise.all(TENANTS.map(async (tenant) => (await sqlite.search.search(tenant, { text: parseQuery('dark'), limit: 100 })).length));
  // Another process (the admin CLI) opening it merges nothing; searches still find every record, the rest
  // being the index's tail.
  const other = openSqliteAdapters(file);
  try {
    expect(await darkCounts(other)).toEqual([100, 0]);
    expect(other.db.prepare('SELECT sum(docs) FROM search_tenants').pluck().get()).toBe(5_000);
  } finally {
    other.close();
  }
  // The server opening it resumes after the first batch.
  const lines: string[] = [];
  const sqlite = openSqliteAdapters(file, { progress: (line) => lines.push(line) });
  try {
    expect(lines[0]).toBe('building the search index of 6000 records');
    expect(await darkCounts(sqlite)).toEqual([100, 0]);
    expect(sqlite.db.prepare('SELECT sum(docs) FROM search_tenants').pluck().get()).toBe(11_000);
  } finally {
    sqlite.close();
  }
});

/**
 * A version-6 database (before the seq counter), its records merged, and then, when `damage` is set, the
 * damage the reused seq did: the newest record deleted, and a new one given its seq, at or below the merge
 * mark, so that the index never had it. Returns the new record's id.
 */
function versionSixDatabase(file: string, damage: boolean): string {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  for (const sql of MIGRATIONS.slice(0, 6)) db.exec(sql);
  db.pragma('user_version = 6');
  const insert = db.prepare(`INSERT INTO records (seq, id, tenant_id, agent_id, type, title, body, client, metadata, created_at)
                             VALUES (?, ?, ?, 'agent', 'fact', ?, 'a body about deploys', NULL, NULL, ?)`);
  for (let i = 1; i <= 40; i++) insert.run(i, `id-${i}`, TENANTS[i % 2]!, `Record number ${i}`, new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString());
  new SearchMerge(db).next(1000);
  if (damage) {
    indexChanges(db)(TENANTS[0]!, [{ doc: 40, title: 'Record number 40', body: 'a body about deploys' }], -1);
    db.prepare('DELETE FROM records WHERE seq = 40').run();
    insert.run(40, 'id-lost', TENANTS[0]!, 'The lost record, about zebras', new Date(Date.UTC(2026, 0, 2)).toISOString());
  }
  db.close();
  return 'id-lost';
}

test('an index that lost a record to a reused seq is rebuilt on upgrade, and the record is found again', async () => {
  const file = join(dir, 'memory.db');
  const lost = versionSixDatabase(file, true);
  const sqlite = openSqliteAdapters(file, { progress: () => undefined, merger: () => ({ wake: () => undefined, close: async () => undefined }) });
  try {
    expect(sqlite.db.prepare('SELECT merged_upto, last_seq FROM search_state').get()).toEqual({ merged_upto: 0, last_seq: 40 });
    expect((await sqlite.search.search(TENANTS[0]!, { text: parseQuery('zebras'), limit: 5 })).map((h) => h.id)).toEqual([lost]);
    expect(indexProblems(sqlite.db)).toEqual([]);
    new SearchMerge(sqlite.db).next(1000);
    expect((await sqlite.search.search(TENANTS[0]!, { text: parseQuery('zebras'), limit: 5 })).map((h) => h.id)).toEqual([lost]);
    expect(indexProblems(sqlite.db)).toEqual([]);
    // The record that could not be deleted (its document count went below zero) now can be, and so can the rest.
    expect(await sqlite.records.delete(TENANTS[0]!, lost)).not.toBeNull();
    expect(await sqlite.records.forget(TENANTS[0]!, { before: '9999-12-31' }, { dryRun: false, at: new Date() })).toEqual({ kind: 'done', matched: 19, deleted: 19 });
    expect(indexProblems(sqlite.db)).toEqual([]);
  } finally {
    sqlite.close();
  }
});

test('an index without that damage keeps its merged records on upgrade, and the seq counter starts above every seq used', async () => {
  const file = join(dir, 'memory.db');
  versionSixDatabase(file, false);
  // Migration 7 alone: a later one (the analyzer's) rebuilds every index, whatever its state.
  const raw = new Database(file);
  raw.exec(MIGRATIONS[6]!);
  expect(raw.prepare('SELECT merged_upto, last_seq FROM search_state').get()).toEqual({ merged_upto: 40, last_seq: 40 });
  expect(raw.prepare('SELECT sum(docs) FROM search_tenants').pluck().get()).toBe(40);
  raw.pragma('user_version = 7');
  raw.close();
  const sqlite = openSqliteAdapters(file, { progress: () => undefined });
  (sqlite.merger as InlineMerger).mergeAll();
  try {
    expect(sqlite.db.prepare('SELECT merged_upto, last_seq FROM search_state').get()).toEqual({ merged_upto: 40, last_seq: 40 });
    expect(sqlite.db.prepare('SELECT sum(docs) FROM search_tenants').pluck().get()).toBe(40);
    expect(indexProblems(sqlite.db)).toEqual([]);
    // A seq at or below the counter is refused, whichever statement tries it.
    expect(() => sqlite.db.prepare("INSERT INTO records (seq, id, tenant_id, agent_id, type, title, body, created_at) VALUES (40, 'x', 't', 'a', 'fact', 't', 'b', '2026-01-01T00:00:00.000Z')").run()).toThrow(
      /above every seq given before/,
    );
    expect(() => sqlite.db.prepare("INSERT INTO records (id, tenant_id, agent_id, type, title, body, created_at) VALUES ('x', 't', 'a', 'fact', 't', 'b', '2026-01-01T00:00:00.000Z')").run()).toThrow(
      /above every seq given before/,
    );
  } finally {
    sqlite.close();
  }
});

test('an index from before the analyzer read clitics and identifiers is rebuilt on upgrade', async () => {
  const file = join(dir, 'memory.db');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  // Up to the analyzer's migration, the one before the blocks' generation.
  const before = MIGRATIONS.indexOf(BLOCK_GENERATION_SQL) - 1;
  for (const sql of MIGRATIONS.slice(0, before)) db.exec(sql);
  db.pragma(`user_version = ${before}`);
  const insert = db.prepare(`INSERT INTO records (seq, id, tenant_id, agent_id, type, title, body, client, metadata, created_at)
                             VALUES (?, ?, ?, 'agent', 'fact', ?, ?, NULL, NULL, ?)`);
  insert.run(1, 'id-invoice', TENANTS[0]!, "The user's invoice", 'INV-2024-0042 is paid', '2026-01-01T00:00:00.000Z');
  insert.run(2, 'id-other', TENANTS[0]!, 'Another invoice', 'INV-2024-0057 is due', '2026-01-01T00:00:01.000Z');
  new SearchMerge(db).next(1000);
  // What the analyzer before stored: "user's" as "user" and "s", and no identifier whole. Planted so, since
  // the merge above ran with today's analyzer.
  const seqOf = (id: string) => db.prepare('SELECT seq FROM records WHERE id = ?').pluck().get(id) as number;
  indexChanges(db)(TENANTS[0]!, [{ doc: seqOf('id-invoice'), title: "The user's invoice", body: 'INV-2024-0042 is paid' }], -1);
  indexChanges(db)(TENANTS[0]!, [{ doc: seqOf('id-invoice'), title: 'The user s invoice', body: 'INV 2024 0042 is paid' }], +1);
  db.close();
  const sqlite = openSqliteAdapters(file, { progress: () => undefined, merger: () => ({ wake: () => undefined, close: async () => undefined }) });
  const searches = async () => ({
    s: await sqlite.search.search(TENANTS[0]!, { text: parseQuery('s'), limit: 5 }),
    invoice: (await sqlite.search.search(TENANTS[0]!, { text: parseQuery('INV-2024-0042'), limit: 5 })).map((h) => h.id),
  });
  try {
    // Back in the tail, analyzed anew: the possessive's `s` matches nothing, the identifier ranks its record first.
    expect(sqlite.db.prepare('SELECT merged_upto FROM search_state').pluck().get()).toBe(0);
    expect(sqlite.db.prepare('SELECT count(*) FROM search_heads').pluck().get()).toBe(0);
    expect(await searches()).toEqual({ s: [], invoice: ['id-invoice', 'id-other'] });
    expect(new SearchMerge(sqlite.db).next(1000)).toBe(2);
    expect(sqlite.db.prepare("SELECT count(*) FROM search_heads WHERE term IN ('s', 'inv-2024-0042')").pluck().get()).toBe(1);
    expect(indexProblems(sqlite.db)).toEqual([]);
    expect(await searches()).toEqual({ s: [], invoice: ['id-invoice', 'id-other'] });
  } finally {
    sqlite.close();
  }
});

test('a database a later version migrated is refused, unchanged, where it was opened as if it were current', () => {
  const file = join(dir, 'memory.db');
  openSqliteAdapters(file).close();
  const later = MIGRATIONS.length + 1;
  const raw = new Database(file);
  raw.pragma(`user_version = ${later}`);
  raw.close();
  expect(() => openSqliteAdapters(file)).toThrow(`has schema version ${later}, newer than this version of the service knows (${MIGRATIONS.length})`);
  const after = new Database(file, { readonly: true });
  expect(after.pragma('user_version', { simple: true })).toBe(later);
  after.close();
});

test("a database of before ids were each tenant's own keeps every record, seq and index entry on upgrade, and takes an id another tenant holds", async () => {
  const file = join(dir, 'memory.db');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  const before = MIGRATIONS.length - 1;
  for (const sql of MIGRATIONS.slice(0, before)) db.exec(sql);
  db.pragma(`user_version = ${before}`);
  const insert = db.prepare(`INSERT INTO records (seq, id, tenant_id, agent_id, type, title, body, client, metadata, created_at, classification, version, updated_at, superseded_by)
                             VALUES (?, ?, ?, 'agent', 'fact', ?, 'a body about deploys', ?, ?, ?, ?, ?, ?, ?)`);
  for (let i = 1; i <= 30; i++) {
    const superseded = i % 7 === 0 ? `id-${i + 1}` : null;
    const classification = i % 3 === 0 ? JSON.stringify({ type: 'fact', confidence: 0.5, model: 'm', classified_at: '2026-01-02T00:00:00.000Z' }) : null;
    insert.run(i, `id-${i}`, TENANTS[i % 2]!, `Record number ${i}`, i % 2 ? 'acme' : null, i % 5 ? null : '{"k":[1]}', new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), classification, 1 + (i % 4), i % 4 ? '2026-01-03T00:00:00.000Z' : null, superseded);
  }
  new SearchMerge(db).next(1000);
  const rows = () => db.prepare('SELECT * FROM records ORDER BY seq').all();
  const records = rows();
  const index = db.prepare('SELECT merged_upto, last_seq, tail_gen FROM search_state').get();
  db.close();

  const lines: string[] = [];
  const sqlite = openSqliteAdapters(file, { progress: (line) => lines.push(line), merger: () => ({ wake: () => undefined, close: async () => undefined }) });
  const fresh = openSqliteAdapters(join(dir, 'fresh.db'));
  try {
    expect(lines).toEqual([`database: migrating from schema version ${before} to ${MIGRATIONS.length}`, expect.stringMatching(/^database: migrated to schema version \d+ in \d+\.\d s$/)]);
    expect(sqlite.db.prepare('SELECT * FROM records ORDER BY seq').all()).toEqual(records);
    expect(sqlite.db.prepare('SELECT merged_upto, last_seq, tail_gen FROM search_state').get()).toEqual(index);
    expect(indexProblems(sqlite.db)).toEqual([]);
    expect((await sqlite.search.search(TENANTS[1]!, { text: parseQuery('record number 29'), limit: 1 })).map((h) => h.id)).toEqual(['id-29']);
    // The table, its indexes and its triggers as a new database has them.
    const schema = (db: Database.Database) => db.prepare("SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'records' ORDER BY name").all();
    expect(schema(sqlite.db)).toEqual(schema(fresh.db));
    expect(schema(sqlite.db)).toContainEqual({ type: 'index', name: 'sqlite_autoindex_records_1', sql: null });
    expect(() => sqlite.db.prepare("INSERT INTO records (seq, id, tenant_id, agent_id, type, title, body, created_at) VALUES (30, 'x', 't', 'a', 'fact', 't', 'b', '2026-01-01T00:00:00.000Z')").run()).toThrow(
      /above every seq given before/,
    );

    // The other tenant's id is imported beside it; the tenant's own is skipped.
    const theirs = (await sqlite.records.get(TENANTS[1]!, 'id-1'))!;
    expect(await sqlite.records.import(TENANTS[0]!, [theirs, (await sqlite.records.get(TENANTS[0]!, 'id-2'))!])).toEqual({ imported: 1, skipped: 1 });
    expect(await sqlite.records.get(TENANTS[0]!, 'id-1')).toEqual({ ...theirs, tenant_id: TENANTS[0] });
    expect(await sqlite.records.get(TENANTS[1]!, 'id-1')).toEqual(theirs);
  } finally {
    sqlite.close();
    fresh.close();
  }
});
