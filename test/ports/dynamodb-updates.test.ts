import { DeleteItemCommand, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TableCheckedSearch } from '../../shared/adapters/aws/dynamodb/checked-search.js';
import { dynamoDbAdapters } from '../../shared/adapters/aws/dynamodb/index.js';
import { recordKey, recordToItem } from '../../shared/adapters/aws/dynamodb/record-item.js';
import { WRITE_TRANSACTION_ITEMS } from '../../shared/adapters/aws/dynamodb/record-update.js';
import { SqliteDocumentIndex } from '../../shared/adapters/local/document-index.js';
import { openSqliteAdapters } from '../../shared/adapters/local/index.js';
import { LIMITS } from '../../shared/domain/limits.js';
import { parseQuery } from '../../shared/domain/query-parse.js';
import { newRecord, type StoredRecord } from '../../shared/domain/record.js';
import type { SearchQuery } from '../../shared/ports.js';
import { createTestTables, describeWithDynamoDb, type TestTables } from '../support/dynamodb.js';

const MONTH = '2026-11';
const input = { agent_id: 'a', type: 'fact' as const, title: 't', body: 'b' };

/**
 * Updates and supersedes on DynamoDB, beyond the port suite: items from before versions, forget jobs that run
 * meanwhile, the size of the write's transaction, and search while the index lags behind an update (the
 * AWS-shaped mode with the index held back: fed by hand with what the stream carried, then not told).
 */
describeWithDynamoDb('updates and supersedes on DynamoDB', (endpoint) => {
  let t: TestTables;
  let dir: string;
  let index: ReturnType<typeof openSqliteAdapters>;
  let at = Date.parse('2026-11-10T12:00:00.000Z');
  beforeEach(async () => {
    t = await createTestTables(endpoint);
    dir = mkdtempSync(join(tmpdir(), 'memory-updates-'));
    index = openSqliteAdapters(join(dir, 'index.db'));
  });
  afterEach(async () => {
    index.close();
    rmSync(dir, { recursive: true, force: true });
    await t.drop();
  });

  async function setUp(options: { forgetSyncMax?: number } = {}) {
    const held: { tenant_id: string; job_id: string }[] = [];
    const { keys, records } = dynamoDbAdapters(t.client, t.names, {
      forgetJobs: { start: async (job) => void held.push(job) },
      ...(options.forgetSyncMax === undefined ? {} : { forgetSyncMax: options.forgetSyncMax }),
    });
    const tenant = (await keys.createTenant({ name: 'n', limits: { recordQuota: 1000, queryQuota: 1000, rate: 1, burst: 1 } })).tenant_id;
    const put = async (extra: Partial<typeof input> & { client?: string } = {}, supersedes?: string[], agentId: string | null = null) => {
      const record = newRecord(tenant, { ...input, ...extra }, new Date((at += 1)));
      await records.create(tenant, record, { recordQuota: 1000, month: MONTH, ...(supersedes ? { supersedes: { ids: supersedes, agentId } } : {}) });
      return record;
    };
    const raw = async (id: string) =>
      unmarshall((await t.client.send(new GetItemCommand({ TableName: t.names.records, Key: marshall(recordKey(tenant, id)) }))).Item!);
    const used = async () => (await dynamoDbAdapters(t.client, t.names).usage.list(MONTH, tenant))[0]?.records ?? 0;
    return { tenant, records, put, raw, used, held };
  }

  test('an item from before versions reads as version 1, current, and its first update makes it version 2; If-Match "1" holds for it', async () => {
    const { tenant, records } = await setUp();
    const record = newRecord(tenant, input, new Date(at));
    const { version: _v, updated_at: _u, superseded_by: _s, ...legacy } = recordToItem(record);
    await t.client.send(new PutItemCommand({ TableName: t.names.records, Item: marshall(legacy) }));
    expect(await records.get(tenant, record.id)).toEqual(record);
    const updated = await records.update(tenant, record.id, { title: 'new' }, { ifVersions: [1], at: new Date(at + 5) });
    expect(updated).toEqual({ ...record, title: 'new', version: 2, updated_at: new Date(at + 5).toISOString() });
    expect(await records.get(tenant, record.id)).toEqual(updated);
    await expect(records.update(tenant, record.id, { title: 'again' }, { ifVersions: [1], at: new Date() })).rejects.toMatchObject({ code: 'version_conflict' });
  });

  test('client and metadata set to null are stored as null, and the item keeps every other field', async () => {
    const { tenant, records, put, raw } = await setUp();
    const r = await put({ client: 'acme' });
    await records.setClassification(tenant, r.id, { type: 'decision', confidence: 0.5, model: 'm', classified_at: '2026-11-10T12:00:00.000Z' });
    const updated = await records.update(tenant, r.id, { client: null, metadata: null, type: 'signal' }, { at: new Date(at + 1) });
    expect(updated).toMatchObject({ client: null, metadata: null, type: 'signal', version: 2, title: r.title, classification: { type: 'decision' } });
    expect(await raw(r.id)).toMatchObject({ client: null, metadata: null, type: 'signal', version: 2 });
    expect(await records.update(tenant, r.id, { metadata: { deep: [{ a: null }] } }, { at: new Date(at + 2) })).toMatchObject({ metadata: { deep: [{ a: null }] }, version: 3 });
  });

  test('a classification for a version an update has replaced never lands; one for the current version, or an item from before versions, does', async () => {
    const { tenant, records, put } = await setUp();
    const c = { type: 'decision' as const, confidence: 0.5, model: 'm', classified_at: '2026-11-10T12:00:00.000Z' };
    const r = await put();
    await records.update(tenant, r.id, { title: 'new text' }, { at: new Date() });
    expect(await records.setClassification(tenant, r.id, c, 1)).toBe(false);
    expect((await records.get(tenant, r.id))!.classification).toBeNull();
    expect(await records.setClassification(tenant, r.id, c, 2)).toBe(true);
    expect((await records.get(tenant, r.id))!.classification).toEqual(c);
    const legacy = newRecord(tenant, input, new Date((at += 1)));
    const { version: _v, updated_at: _u, superseded_by: _s, ...item } = recordToItem(legacy);
    await t.client.send(new PutItemCommand({ TableName: t.names.records, Item: marshall(item) }));
    expect(await records.setClassification(tenant, legacy.id, c, 2)).toBe(false);
    expect(await records.setClassification(tenant, legacy.id, c, 1)).toBe(true);
    expect(await records.setClassification(tenant, '01900000-0000-7000-8000-00000000dead', c, 1)).toBe(false);
  });

  test('an update never reaches another tenant\'s record, nor one that is gone', async () => {
    const { records, put, tenant } = await setUp();
    const r = await put();
    expect(await records.update('01900000-0000-7000-8000-000000000000', r.id, { title: 'x' }, { at: new Date() })).toBeNull();
    await records.delete(tenant, r.id);
    expect(await records.update(tenant, r.id, { title: 'x' }, { at: new Date() })).toBeNull();
    expect(await records.update(tenant, r.id, { title: 'x' }, { ifVersions: [1], at: new Date() })).toBeNull();
    // Nothing was written back as a bare item.
    const { Item } = await t.client.send(new GetItemCommand({ TableName: t.names.records, Key: marshall(recordKey(tenant, r.id)) }));
    expect(Item).toBeUndefined();
  });

  test('while a forget job runs, what it hides cannot be updated or superseded, and what it does not can', async () => {
    const { tenant, records, put, used } = await setUp({ forgetSyncMax: 2 });
    const hidden = await Promise.all([put({ client: 'gone' }), put({ client: 'gone' }), put({ client: 'gone' })]);
    const kept = await put({ client: 'kept' });
    const clientless = await put();
    expect(await records.forget(tenant, { client: 'gone' }, { dryRun: false, at: new Date(at + 100) })).toMatchObject({ kind: 'job' });
    expect(await records.update(tenant, hidden[0]!.id, { title: 'back?' }, { at: new Date() })).toBeNull();
    const counted = await used();
    await expect(put({}, [kept.id, hidden[1]!.id])).rejects.toMatchObject({ code: 'not_found', message: `No record with id ${hidden[1]!.id}` });
    expect(await used()).toBe(counted);
    expect((await records.get(tenant, kept.id))!.superseded_by).toBeNull();
    // Concurrent updates of a record the job does not hide all apply, even those that move its client.
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => records.update(tenant, kept.id, i % 2 ? { client: `kept-${i}` } : { title: `t${i}` }, { at: new Date() })),
    );
    expect(results.every((r) => r !== null)).toBe(true);
    expect((await records.get(tenant, kept.id))!.version).toBe(11);
    expect(await records.update(tenant, clientless.id, { title: 'no client' }, { at: new Date() })).toMatchObject({ client: null, version: 2 });
    // Moving a record into the job's selectors hides it from then on: the next update finds nothing.
    expect(await records.update(tenant, kept.id, { client: 'gone' }, { at: new Date() })).not.toBeNull();
    expect(await records.update(tenant, kept.id, { title: 'x' }, { at: new Date() })).toBeNull();
  });

  test(`a write that supersedes ${LIMITS.supersedesMax} records with an idempotency key is one transaction, within DynamoDB's 100 items`, async () => {
    expect(WRITE_TRANSACTION_ITEMS).toBeLessThanOrEqual(100);
    const { tenant, records, put, used } = await setUp();
    const old = [];
    for (let i = 0; i < LIMITS.supersedesMax; i++) old.push(await put());
    const record = newRecord(tenant, input, new Date((at += 1)));
    const options = { recordQuota: 1000, month: MONTH, idempotency: { key: 'k', requestHash: 'h' }, supersedes: { ids: old.map((r) => r.id), agentId: null } };
    expect((await records.create(tenant, record, options)).replayed).toBe(false);
    for (const r of old) expect((await records.get(tenant, r.id))!.superseded_by).toBe(record.id);
    expect(await used()).toBe(LIMITS.supersedesMax + 1);
  });

  test('a supersede that fails names the first id that failed, and stores, counts and marks nothing', async () => {
    const { tenant, records, put, used } = await setUp();
    const mine = await put({ agent_id: 'me' });
    const theirs = await put({ agent_id: 'them' });
    const deleted = await put();
    await records.delete(tenant, deleted.id);
    const unknown = '01900000-0000-7000-8000-00000000abcd';
    const before = await used();
    for (const [ids, agent, failing] of [
      [[mine.id, unknown], null, unknown],
      [[mine.id, deleted.id, unknown], null, deleted.id],
      [[mine.id, theirs.id], 'me', theirs.id],
    ] as const) {
      const record = newRecord(tenant, input, new Date((at += 1)));
      await expect(records.create(tenant, record, { recordQuota: 1000, month: MONTH, supersedes: { ids, agentId: agent } })).rejects.toMatchObject({
        code: 'not_found',
        message: `No record with id ${failing}`,
      });
      expect(await records.get(tenant, record.id)).toBeNull();
    }
    expect(await used()).toBe(before);
    expect((await records.get(tenant, mine.id))!.superseded_by).toBeNull();
    // Another tenant's record is not this tenant's to supersede.
    const other = dynamoDbAdapters(t.client, t.names);
    const stranger = (await other.keys.createTenant({ name: 'o', limits: { recordQuota: 10, queryQuota: 10, rate: 1, burst: 1 } })).tenant_id;
    await expect(
      other.records.create(stranger, newRecord(stranger, input, new Date()), { recordQuota: 10, month: MONTH, supersedes: { ids: [mine.id], agentId: null } }),
    ).rejects.toMatchObject({ code: 'not_found' });
    // With the agent's own record, the agent-bound write goes through.
    const ok = await put({ agent_id: 'me' }, [mine.id], 'me');
    expect((await records.get(tenant, mine.id))!.superseded_by).toBe(ok.id);
  });

  test('a replayed write supersedes nothing new, and a quota that ran out still answers the 404 of a bad id first', async () => {
    const { tenant, records, put } = await setUp();
    const a = await put();
    const first = newRecord(tenant, input, new Date((at += 1)));
    const options = { recordQuota: 1000, month: MONTH, idempotency: { key: 'k', requestHash: 'h' }, supersedes: { ids: [a.id], agentId: null } };
    await records.create(tenant, first, options);
    const later = await put({}, [a.id]);
    const replay = await records.create(tenant, newRecord(tenant, input, new Date((at += 1))), options);
    expect(replay).toEqual({ receipt: expect.objectContaining({ id: first.id }), replayed: true });
    expect((await records.get(tenant, a.id))!.superseded_by).toBe(later.id);
    // A replay whose superseded record is gone since still replays.
    await records.delete(tenant, a.id);
    expect((await records.create(tenant, newRecord(tenant, input, new Date((at += 1))), options)).replayed).toBe(true);
    await expect(
      records.create(tenant, newRecord(tenant, input, new Date((at += 1))), { recordQuota: 0, month: MONTH, supersedes: { ids: [a.id], agentId: null } }),
    ).rejects.toMatchObject({ code: 'not_found' });
  });

  describe('search while the index lags behind updates', () => {
    async function lagging() {
      const s = await setUp();
      const indexed = new SqliteDocumentIndex(index.db);
      /** What the stream delivered before it stalled: these records as they are now. */
      const deliver = async (...ids: string[]) => {
        const now = await Promise.all(ids.map((id) => s.records.get(s.tenant, id)));
        expect(await indexed.apply(now.map((record) => ({ kind: 'upsert' as const, record: record! })))).toEqual(ids.map(() => null));
      };
      const search = new TableCheckedSearch(index.search, s.records);
      const find = (q: string | undefined, extra: Partial<SearchQuery> = {}) => search.search(s.tenant, { text: parseQuery(q), limit: 10, ...extra });
      return { ...s, deliver, find };
    }

    test('an updated record is never a hit by its old words only, and a hit shows the new text', async () => {
      const { tenant, records, put, deliver, find } = await lagging();
      const dark = await put({ title: 'User prefers dark mode', body: 'dark theme everywhere' });
      const other = await put({ title: 'User likes mode switches', body: 'nothing else' });
      await deliver(dark.id, other.id);
      const updated = (await records.update(tenant, dark.id, { title: 'User switched to light mode', body: 'light theme now' }, { at: new Date() }))!;
      // The index still has "dark" for it.
      expect((await index.search.search(tenant, { text: parseQuery('dark'), limit: 10 })).map((h) => h.id)).toEqual([dark.id]);
      expect(await find('dark')).toEqual([]);
      expect(await find('"dark mode"')).toEqual([]);
      // Matched by a word the new text still has ("mode"): shown as the table holds it.
      const hits = await find('mode');
      expect(hits.map((h) => h.id).sort()).toEqual([dark.id, other.id].sort());
      const shown = hits.find((h) => h.id === dark.id)!;
      expect({ ...shown, rank: 0 }).toEqual({ ...updated, rank: 0 });
      expect(shown.rank).toBeGreaterThan(0);
      // Stemmed as the engine stems: "switching" matches the new "switched".
      expect((await find('switching dark')).map((h) => h.id).sort()).toEqual([dark.id, other.id].sort());
      // Without text, the newest records, each as the table holds it now.
      expect((await find(undefined)).find((h) => h.id === dark.id)).toEqual({ ...updated, rank: 0 });
      // Once the stream delivers the update, the index agrees.
      await deliver(dark.id);
      expect((await find('light')).map((h) => h.id)).toEqual([dark.id]);
      expect(await find('dark')).toEqual([]);
    });

    test('a record whose type or client changed is no hit for the filter it no longer passes', async () => {
      const { tenant, records, put, deliver, find } = await lagging();
      const r = await put({ title: 'zephyr notes', client: 'acme' });
      await deliver(r.id);
      await records.update(tenant, r.id, { type: 'decision', client: null }, { at: new Date() });
      expect(await find('zephyr', { type: 'fact' })).toEqual([]);
      expect(await find('zephyr', { client: 'acme' })).toEqual([]);
      expect(await find(undefined, { type: 'fact' })).toEqual([]);
      expect(await find('zephyr')).toEqual([expect.objectContaining({ id: r.id, type: 'decision', client: null, version: 2 })]);
    });

    test('a record superseded since the index had it is left out unless include_superseded, and then shows who supersedes it', async () => {
      const { put, deliver, find } = await lagging();
      const dark = await put({ title: 'User prefers dark mode' });
      await deliver(dark.id);
      const light = await put({ title: 'User switched to light mode' }, [dark.id]);
      // The index has neither the supersede nor the new record yet.
      expect(await find('mode')).toEqual([]);
      expect(await find('mode', { include_superseded: true })).toEqual([expect.objectContaining({ id: dark.id, superseded_by: light.id })]);
      await deliver(light.id, dark.id);
      expect((await find('dark or light mode?')).map((h) => h.id)).toEqual([light.id]);
      expect((await find('dark or light mode?', { include_superseded: true })).map((h) => h.id).sort()).toEqual([dark.id, light.id].sort());
    });

    test('a full page that loses hits to updates is filled again from further down', async () => {
      const { tenant, records, put, deliver, find } = await lagging();
      const all = [];
      for (let i = 0; i < 25; i++) all.push(await put({ title: `zephyr ${i}` }));
      await deliver(...all.map((r) => r.id));
      const changed = all.slice(15);
      for (const r of changed) await records.update(tenant, r.id, { title: 'calm now' }, { at: new Date() });
      const hits = await find('zephyr');
      expect(hits).toHaveLength(10);
      for (const r of changed) expect(hits.map((h) => h.id)).not.toContain(r.id);
    });
  });

  test('racing updates: with If-Match exactly one per version wins; without, every one is counted', async () => {
    const { tenant, records, put } = await setUp();
    const r = await put();
    const race = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => records.update(tenant, r.id, { title: `w${i}` }, { ifVersions: [1], at: new Date() })));
    const won = race.filter((x) => x.status === 'fulfilled');
    expect(won).toHaveLength(1);
    expect(race.filter((x) => x.status === 'rejected').every((x) => (x as PromiseRejectedResult).reason.code === 'version_conflict')).toBe(true);
    expect(await records.get(tenant, r.id)).toEqual((won[0] as PromiseFulfilledResult<StoredRecord>).value);
    const free = await Promise.all(Array.from({ length: 20 }, (_, i) => records.update(tenant, r.id, { body: `b${i}` }, { at: new Date() })));
    expect(free.map((x) => x!.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 3));
    const last = free.find((x) => x!.version === 22)!;
    expect(await records.get(tenant, r.id)).toEqual(last);
    // Deleted meanwhile: nothing comes back.
    await t.client.send(new DeleteItemCommand({ TableName: t.names.records, Key: marshall(recordKey(tenant, r.id)) }));
    expect(await records.update(tenant, r.id, { title: 'x' }, { at: new Date() })).toBeNull();
  });
});
