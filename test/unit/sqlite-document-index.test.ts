import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDocumentIndex } from '../../shared/adapters/local/document-index.js';
import { openSqliteAdapters, type SqliteAdapters } from '../../shared/adapters/local/index.js';
import { InlineMerger } from '../../shared/adapters/local/search-merger.js';
import type { IndexChange } from '../../shared/ports.js';
import { parseQuery } from '../../shared/domain/query-parse.js';
import { newRecord, type Classification, type StoredRecord } from '../../shared/domain/record.js';

const TENANT = '0193a000-0000-7000-8000-000000000001';
const OTHER = '0193a000-0000-7000-8000-000000000002';
const CLASSIFIED: Classification = { type: 'decision', confidence: 0.5, model: 'keyword-baseline-v1', classified_at: '2026-11-21T10:00:01.000Z' };

let dir: string;
let adapters: SqliteAdapters;
let documents: SqliteDocumentIndex;
/** Whether each change is merged into the index at once, or left in the tail (search-merge.ts). */
let merged = false;
const index = {
  async apply(changes: IndexChange[]) {
    const outcomes = await documents.apply(changes);
    if (merged) (adapters.merger as InlineMerger).mergeAll();
    return outcomes;
  },
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memory-docindex-'));
  adapters = openSqliteAdapters(join(dir, 'memory.db'));
  documents = new SqliteDocumentIndex(adapters.db);
});

afterEach(() => {
  adapters.close();
  rmSync(dir, { recursive: true, force: true });
});

function record(title: string, body: string, tenant = TENANT): StoredRecord {
  return newRecord(tenant, { agent_id: 'bot', type: 'fact', title, body, client: 'acme', metadata: { source: 'chat' } }, new Date());
}

const search = (q: string, tenant = TENANT) => adapters.search.search(tenant, { text: parseQuery(q), limit: 20 });
const count = (table: string) => (adapters.db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

describe.each([
  ['records left in the tail', false],
  ['records merged into the index', true],
])('SQLite document index, %s', (_, merge) => {
  beforeEach(() => {
    merged = merge;
  });

  test('an upserted record is found by the search index, with every field', async () => {
    const r = record('The user prefers dark mode', 'Switched it on while running errands');
    expect(await index.apply([{ kind: 'upsert', record: r }])).toEqual([null]);
    const hits = await search('run');
    expect(hits).toHaveLength(1);
    const { rank, ...hit } = hits[0]!;
    expect(hit).toEqual(r);
    expect(rank).toBeGreaterThan(0);
    expect(await search('dark', OTHER)).toEqual([]);
  });

  test('re-indexing a record for its classification leaves the FTS row, so no rank moves', async () => {
    const a = record('dark mode everywhere', 'the dark theme');
    const b = record('dark corners', 'notes on lighting and dark rooms and more words here');
    await index.apply([a, b].map((r) => ({ kind: 'upsert' as const, record: r })));
    const ranks = async () => (await search('dark')).map((h) => [h.id, h.rank]);
    const before = await ranks();
    expect(before).toHaveLength(2);
    await index.apply([{ kind: 'upsert', record: { ...b, classification: CLASSIFIED } }]);
    await index.apply([{ kind: 'upsert', record: { ...a, classification: CLASSIFIED } }]);
    expect(await ranks()).toEqual(before);
  });

  test('a replayed upsert leaves one row and one hit', async () => {
    const r = record('dark mode', 'body');
    await index.apply([{ kind: 'upsert', record: r }]);
    expect(await index.apply([{ kind: 'upsert', record: r }, { kind: 'upsert', record: r }])).toEqual([null, null]);
    expect(await search('dark')).toHaveLength(1);
    expect(count('records')).toBe(1);
  });

  test('a MODIFY that sets the classification leaves exactly one hit, with the new classification', async () => {
    const r = record('dark mode', 'body');
    await index.apply([{ kind: 'upsert', record: r }]);
    await index.apply([{ kind: 'upsert', record: { ...r, classification: CLASSIFIED } }]);
    const hits = await search('dark');
    expect(hits).toHaveLength(1);
    expect(hits[0]!.classification).toEqual(CLASSIFIED);
    expect(hits[0]!.type).toBe('fact');
    // The newest-first listing reads the same rows.
    expect((await adapters.search.search(TENANT, { text: null, limit: 20 })).map((h) => h.classification)).toEqual([CLASSIFIED]);
  });

  test('a title change re-indexes the words: the old ones no longer match, the new ones do', async () => {
    const r = record('dark mode', 'nothing else');
    await index.apply([{ kind: 'upsert', record: r }]);
    await index.apply([{ kind: 'upsert', record: { ...r, title: 'light theme' } }]);
    expect(await search('dark')).toEqual([]);
    expect((await search('theme')).map((h) => [h.id, h.title])).toEqual([[r.id, 'light theme']]);
  });

  test('a delete removes the record and its index entry, and deleting again is harmless', async () => {
    const r = record('dark mode', 'body');
    const kept = record('dark room', 'body');
    await index.apply([{ kind: 'upsert', record: r }, { kind: 'upsert', record: kept }]);
    const del = { kind: 'delete' as const, tenant_id: TENANT, id: r.id };
    expect(await index.apply([del])).toEqual([null]);
    expect(await index.apply([del])).toEqual([null]);
    expect((await search('dark')).map((h) => h.id)).toEqual([kept.id]);
    expect(count('records')).toBe(1);
  });

  test('a record written after the newest one was deleted is found, and keeps being found after the merge', async () => {
    const first = record('dark mode', 'body');
    const newest = record('dark room', 'body');
    await index.apply([{ kind: 'upsert', record: first }, { kind: 'upsert', record: newest }]);
    await index.apply([{ kind: 'delete', tenant_id: TENANT, id: newest.id }]);
    // SQLite alone would give the next row the deleted one's seq, at or below the merge mark once merged.
    const next = record('dark matter', 'body');
    await index.apply([{ kind: 'upsert', record: next }]);
    expect((await search('dark')).map((h) => h.title).sort()).toEqual(['dark matter', 'dark mode']);
    (adapters.merger as InlineMerger).mergeAll();
    expect((await search('dark')).map((h) => h.title).sort()).toEqual(['dark matter', 'dark mode']);
    expect((await search('matter')).map((h) => h.id)).toEqual([next.id]);
  });

  test('a delete names the tenant: another tenant cannot remove the record', async () => {
    const r = record('dark mode', 'body');
    await index.apply([{ kind: 'upsert', record: r }]);
    await index.apply([{ kind: 'delete', tenant_id: OTHER, id: r.id }]);
    expect(await search('dark')).toHaveLength(1);
  });

  test('changes apply in order: insert, modify, delete, insert again', async () => {
    const r = record('dark mode', 'body');
    const results = await index.apply([
      { kind: 'upsert', record: r },
      { kind: 'upsert', record: { ...r, classification: CLASSIFIED } },
      { kind: 'delete', tenant_id: TENANT, id: r.id },
      { kind: 'upsert', record: { ...r, title: 'dark again' } },
    ]);
    expect(results).toEqual([null, null, null, null]);
    expect((await search('dark')).map((h) => h.title)).toEqual(['dark again']);
  });

  test('a change that fails reports why and rolls back alone', async () => {
    const r = record('dark mode', 'body');
    await index.apply([{ kind: 'upsert', record: r }]);
    const fresh = record('dark matter', 'body');
    const results = await index.apply([
      { kind: 'upsert', record: { ...r, title: null as unknown as string, body: 'broken' } },
      { kind: 'upsert', record: fresh },
    ]);
    expect(results[0]).toMatch(/NOT NULL constraint failed: records.title/);
    expect(results[1]).toBeNull();
    expect((await search('dark')).map((h) => h.title).sort()).toEqual(['dark matter', 'dark mode']);
    expect(await search('broken')).toEqual([]);
  });

  test("the same id in another tenant is that tenant's own record, changed and deleted apart", async () => {
    const r = record('dark mode', 'body');
    const twin = { ...r, tenant_id: OTHER, title: 'dark twin' };
    expect(await index.apply([{ kind: 'upsert', record: r }, { kind: 'upsert', record: twin }])).toEqual([null, null]);
    expect((await search('dark')).map((h) => h.title)).toEqual(['dark mode']);
    expect((await search('dark', OTHER)).map((h) => h.title)).toEqual(['dark twin']);
    expect(await index.apply([{ kind: 'delete', tenant_id: OTHER, id: r.id }])).toEqual([null]);
    expect(await search('dark', OTHER)).toEqual([]);
    expect((await search('dark')).map((h) => h.title)).toEqual(['dark mode']);
  });
});
