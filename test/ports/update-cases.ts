import { newRecord, type RecordInput, type SearchHit, type StoredRecord } from '../../shared/domain/record.js';
import type { CreateRecordOptions, SearchQuery } from '../../shared/ports.js';
import type { PortFixture, PortSuiteOptions } from './port-suite.js';

/** What the port suite's cases share with these: its fixture, tenants, clock and helpers, read when a test runs. */
export interface SuiteContext {
  f(): PortFixture;
  tenantA(): string;
  tenantB(): string;
  /** The next millisecond of the suite's clock. */
  tick(): number;
  put(tenantId: string, input?: Partial<RecordInput>): Promise<StoredRecord>;
  search(tenantId: string, q?: Partial<SearchQuery> & { q?: string }): Promise<SearchHit[]>;
}

const MONTH = '2026-11';
const UNKNOWN = '01900000-0000-7000-8000-000000000000';

/**
 * The port suite's cases for correcting records (decisions.md, "Version 1.2"): RecordStore.update and a
 * write's `supersedes`, on every backend, through the ports alone.
 */
export function updateCases(s: SuiteContext, options: PortSuiteOptions): void {
  const records = () => s.f().records;
  const at = () => new Date(s.tick());
  const ids = (hits: readonly { id: string }[]) => hits.map((h) => h.id);

  /** A new record of the tenant, written with `options` (supersedes, idempotency). */
  async function write(tenantId: string, input: Partial<RecordInput>, extra: Partial<CreateRecordOptions> = {}): Promise<StoredRecord> {
    const record = newRecord(tenantId, { agent_id: 'agent-1', type: 'fact', title: 'A title', body: 'A body', ...input }, at());
    await records().create(tenantId, record, { recordQuota: 1000, month: MONTH, ...extra });
    return record;
  }

  describe('RecordStore.update', () => {
    test('changes the fields the patch names, one version more each time, with updated_at; the rest stays', async () => {
      const r = await s.put(s.tenantA(), { client: 'c1', metadata: { k: [1, 'two'] } });
      const first = at();
      const once = await records().update(s.tenantA(), r.id, { title: 'A new title', type: 'decision' }, { at: first });
      expect(once).toEqual({ ...r, title: 'A new title', type: 'decision', version: 2, updated_at: first.toISOString() });
      expect(await records().get(s.tenantA(), r.id)).toEqual(once);
      const second = at();
      const twice = await records().update(s.tenantA(), r.id, { body: 'A new body', metadata: { k: 'replaced whole' } }, { at: second });
      expect(twice).toEqual({ ...once, body: 'A new body', metadata: { k: 'replaced whole' }, version: 3, updated_at: second.toISOString() });
      expect(await records().get(s.tenantA(), r.id)).toEqual(twice);
    });

    test('a null client or metadata removes it', async () => {
      const r = await s.put(s.tenantA(), { client: 'c1', metadata: { k: 1 } });
      const updated = await records().update(s.tenantA(), r.id, { client: null, metadata: null }, { at: at() });
      expect(updated).toMatchObject({ client: null, metadata: null, title: r.title, version: 2 });
      expect(await records().get(s.tenantA(), r.id)).toEqual(updated);
    });

    test('ifVersions without the record\'s version is version_conflict and changes nothing; with it, the update applies', async () => {
      const r = await s.put(s.tenantA(), { title: 'Dark mode on' });
      for (const ifVersions of [[2], [], [0, 3]]) {
        await expect(records().update(s.tenantA(), r.id, { title: 'Light mode on' }, { ifVersions, at: at() })).rejects.toMatchObject({ code: 'version_conflict' });
      }
      expect(await records().get(s.tenantA(), r.id)).toEqual(r);
      expect(ids(await s.search(s.tenantA(), { q: 'dark' }))).toEqual([r.id]);
      expect(ids(await s.search(s.tenantA(), { q: 'light' }))).toEqual([]);
      expect(await records().update(s.tenantA(), r.id, { title: 'Light mode on' }, { ifVersions: [3, 1], at: at() })).toMatchObject({ version: 2 });
      await expect(records().update(s.tenantA(), r.id, { title: 'Dark again' }, { ifVersions: [1], at: at() })).rejects.toMatchObject({ code: 'version_conflict' });
      expect(await records().get(s.tenantA(), r.id)).toMatchObject({ title: 'Light mode on', version: 2 });
    });

    test("an unknown id, or another tenant's, is null and changes nothing, whatever ifVersions says", async () => {
      const r = await s.put(s.tenantA(), { title: 'Dark mode on' });
      expect(await records().update(s.tenantB(), r.id, { title: 'Taken over' }, { at: at() })).toBeNull();
      expect(await records().update(s.tenantB(), r.id, { title: 'Taken over' }, { ifVersions: [7], at: at() })).toBeNull();
      expect(await records().update(s.tenantA(), UNKNOWN, { title: 'Nothing' }, { ifVersions: [1], at: at() })).toBeNull();
      expect(await records().get(s.tenantA(), r.id)).toEqual(r);
      expect(ids(await s.search(s.tenantB(), { q: 'taken' }))).toEqual([]);
    });

    test('concurrent updates: with ifVersions one of them wins each version; without, each one counts', async () => {
      const r = await s.put(s.tenantA());
      const guarded = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => records().update(s.tenantA(), r.id, { title: `guarded ${i}` }, { ifVersions: [1], at: at() })));
      const won = guarded.filter((x) => x.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const lost of guarded.filter((x) => x.status === 'rejected')) expect(lost.reason).toMatchObject({ code: 'version_conflict' });
      expect(await records().get(s.tenantA(), r.id)).toEqual((won[0] as PromiseFulfilledResult<StoredRecord>).value);
      await Promise.all(Array.from({ length: 10 }, (_, i) => records().update(s.tenantA(), r.id, { body: `free ${i}` }, { at: at() })));
      expect(await records().get(s.tenantA(), r.id)).toMatchObject({ version: 12 });
    });

    test('a new text is found by its new words and no longer by its old ones; other fields leave the text as it was', async () => {
      const r = await s.put(s.tenantA(), { title: 'User prefers dark mode', body: 'Set in March', client: 'c1' });
      const other = await s.put(s.tenantA(), { title: 'Dark roast coffee', body: 'Every morning' });
      // Both in the index proper, where the backend has a tail besides (the tail's part is the same text read again).
      await s.f().indexAll?.();
      await records().update(s.tenantA(), r.id, { title: 'User switched to light mode', body: 'Changed in November' }, { at: at() });
      expect(ids(await s.search(s.tenantA(), { q: 'dark' }))).toEqual([other.id]);
      expect(ids(await s.search(s.tenantA(), { q: 'march' }))).toEqual([]);
      expect(ids(await s.search(s.tenantA(), { q: 'light november' }))).toEqual([r.id]);
      const [hit] = await s.search(s.tenantA(), { q: 'switched' });
      expect(hit).toMatchObject({ id: r.id, title: 'User switched to light mode', version: 2 });
      // A filter on a field the update changed sees the new value.
      await records().update(s.tenantA(), r.id, { type: 'decision', client: 'c2' }, { at: at() });
      expect(ids(await s.search(s.tenantA(), { q: 'light', client: 'c2', type: 'decision' }))).toEqual([r.id]);
      expect(ids(await s.search(s.tenantA(), { q: 'light', client: 'c1' }))).toEqual([]);
      expect(ids(await s.search(s.tenantA(), { q: 'light november' }))).toEqual([r.id]);
    });

    if ('otherTenantRecords' in options.ownRanks) {
      test('after updates, a tenant ranks exactly as one that wrote the final texts', async () => {
        const texts = [
          ['deploy notes', 'the release went out late'],
          ['invoice renewal', 'renewal of the deploy contract'],
          ['lunch in berlin', 'the team met for lunch'],
          ['flight refund', 'refund for the berlin flight'],
        ] as const;
        const written = [];
        for (const [title, body] of texts) written.push(await s.put(s.tenantA(), { title: `${title} draft`, body: `${body} draft words` }));
        await s.f().indexAll?.();
        for (const [i, r] of written.entries()) await records().update(s.tenantA(), r.id, { title: texts[i]![0], body: texts[i]![1] }, { at: at() });
        for (const [title, body] of texts) await s.put(s.tenantB(), { title, body });
        const ranks = async (tenantId: string) =>
          Promise.all(['deploy', 'berlin lunch', 'renewal', '"berlin flight"', 'draft'].map(async (q) => (await s.search(tenantId, { q })).map((h) => [h.title, h.rank])));
        expect(await ranks(s.tenantA())).toEqual(await ranks(s.tenantB()));
      });
    }

    if (options.createQueuesJob) {
      test('a new title or body queues the classification again, in the same step; other fields do not', async () => {
        const r = await s.put(s.tenantA());
        const jobs = s.f().jobs;
        await jobs.complete((await jobs.claim(10, 60_000)).map((j) => j.jobId));
        await records().update(s.tenantA(), r.id, { type: 'decision', metadata: { a: 1 } }, { at: at() });
        expect(await jobs.claim(10, 60_000)).toEqual([]);
        await records().update(s.tenantA(), r.id, { title: 'A new title' }, { at: at() });
        await records().update(s.tenantA(), r.id, { body: 'A new body' }, { at: at() });
        // One job for the text as it is now: the second update's replaced the first's, which was still waiting.
        expect(await jobs.claim(10, 60_000)).toEqual([expect.objectContaining({ tenant_id: s.tenantA(), record_id: r.id })]);
      });
    }

    test("setClassification with a version lands only while the record has it: a suggestion for a replaced text never does", async () => {
      const r = await s.put(s.tenantA());
      const c = { type: 'decision' as const, confidence: 0.8, model: 'm', classified_at: '2026-11-10T12:00:01.000Z' };
      await records().update(s.tenantA(), r.id, { title: 'A new title' }, { at: at() });
      expect(await records().setClassification(s.tenantA(), r.id, c, 1)).toBe(false);
      expect((await records().get(s.tenantA(), r.id))!.classification).toBeNull();
      expect(await records().setClassification(s.tenantA(), r.id, c, 2)).toBe(true);
      expect(await records().get(s.tenantA(), r.id)).toMatchObject({ classification: c, version: 2 });
    });
  });

  describe('supersedes', () => {
    const by = (ids: string[], agentId: string | null = null) => ({ supersedes: { ids, agentId } });

    test('a write supersedes the named records in the same step: GET shows superseded_by, their version stays', async () => {
      const [a, b] = [await s.put(s.tenantA()), await s.put(s.tenantA())];
      const n = await write(s.tenantA(), { title: 'The newer one' }, by([a.id, b.id]));
      for (const old of [a, b]) expect(await records().get(s.tenantA(), old.id)).toEqual({ ...old, superseded_by: n.id });
      expect(await records().get(s.tenantA(), n.id)).toEqual(n);
      // A superseded record can be superseded again, by a newer one still.
      const newest = await write(s.tenantA(), {}, by([a.id]));
      expect(await records().get(s.tenantA(), a.id)).toMatchObject({ superseded_by: newest.id, version: 1, updated_at: null });
    });

    test('an id the tenant does not have is not_found naming it, and nothing is stored or counted', async () => {
      const a = await s.put(s.tenantA());
      const theirs = await s.put(s.tenantB());
      const deleted = await s.put(s.tenantA());
      await records().delete(s.tenantA(), deleted.id);
      const counted = async () => (await s.f().usage.list(MONTH, s.tenantA()))[0]?.records;
      const before = await counted();
      for (const missing of [UNKNOWN, theirs.id, deleted.id]) {
        const record = newRecord(s.tenantA(), { agent_id: 'agent-1', type: 'fact', title: 'Never stored', body: 'b' }, at());
        const attempt = records().create(s.tenantA(), record, { recordQuota: 1000, month: MONTH, ...by([a.id, missing]) });
        await expect(attempt).rejects.toMatchObject({ code: 'not_found', message: expect.stringContaining(missing) });
        expect(await records().get(s.tenantA(), record.id)).toBeNull();
      }
      expect(await records().get(s.tenantA(), a.id)).toEqual(a);
      expect(await records().get(s.tenantB(), theirs.id)).toEqual(theirs);
      expect(await counted()).toBe(before);
      expect(ids(await s.search(s.tenantA(), { q: 'never stored' }))).toEqual([]);
    });

    test("with an agent, only that agent's records: another agent's is not_found naming it", async () => {
      const mine = await s.put(s.tenantA(), { agent_id: 'x' });
      const theirs = await s.put(s.tenantA(), { agent_id: 'y' });
      await expect(write(s.tenantA(), { agent_id: 'x' }, by([mine.id, theirs.id], 'x'))).rejects.toMatchObject({
        code: 'not_found',
        message: expect.stringContaining(theirs.id),
      });
      expect(await records().get(s.tenantA(), mine.id)).toEqual(mine);
      const n = await write(s.tenantA(), { agent_id: 'x' }, by([mine.id], 'x'));
      expect(await records().get(s.tenantA(), mine.id)).toMatchObject({ superseded_by: n.id });
    });

    test('search and listing leave superseded records out unless include_superseded; GET still returns them', async () => {
      const dark = await s.put(s.tenantA(), { title: 'User prefers dark mode', body: 'Set in March', agent_id: 'x' });
      const light = await write(s.tenantA(), { title: 'User switched to light mode', body: 'Changed in November', agent_id: 'x' }, by([dark.id]));
      const question = 'dark or light mode?';
      expect(ids(await s.search(s.tenantA(), { q: question }))).toEqual([light.id]);
      expect(ids(await s.search(s.tenantA(), { q: 'dark' }))).toEqual([]);
      expect(ids(await s.search(s.tenantA(), { q: 'dark', agent_id: 'x' }))).toEqual([]);
      expect(ids(await s.search(s.tenantA(), { q: 'dark', type: 'fact', since: dark.created_at }))).toEqual([]);
      expect(ids(await s.search(s.tenantA()))).toEqual([light.id]);
      expect(ids(await s.search(s.tenantA(), { q: question, include_superseded: true })).sort()).toEqual([dark.id, light.id].sort());
      expect(ids(await s.search(s.tenantA(), { q: 'dark', agent_id: 'x', include_superseded: true }))).toEqual([dark.id]);
      expect(ids(await s.search(s.tenantA(), { include_superseded: true }))).toEqual([light.id, dark.id]);
      expect(ids(await records().list(s.tenantA(), { filters: {}, order: 'asc', limit: 10 }))).toEqual([light.id]);
      expect(ids(await records().list(s.tenantA(), { filters: { agent_id: 'x' }, order: 'asc', limit: 10 }))).toEqual([light.id]);
      expect(ids(await records().list(s.tenantA(), { filters: { include_superseded: true }, order: 'asc', limit: 10 }))).toEqual([dark.id, light.id]);
      expect(await records().get(s.tenantA(), dark.id)).toMatchObject({ superseded_by: light.id });
      // An update leaves a superseded record superseded.
      await records().update(s.tenantA(), dark.id, { title: 'User prefers dark mode, said in March' }, { at: at() });
      expect(ids(await s.search(s.tenantA(), { q: 'dark' }))).toEqual([]);
      expect(await records().get(s.tenantA(), dark.id)).toMatchObject({ superseded_by: light.id, version: 2 });
    });

    test('a replayed idempotent write supersedes nothing', async () => {
      const [a, b] = [await s.put(s.tenantA()), await s.put(s.tenantA())];
      const idempotency = { key: 'supersede-once', requestHash: 'h' };
      const first = await write(s.tenantA(), {}, { idempotency, ...by([a.id]) });
      const replay = newRecord(s.tenantA(), { agent_id: 'agent-1', type: 'fact', title: 'A title', body: 'A body' }, at());
      const result = await records().create(s.tenantA(), replay, { recordQuota: 1000, month: MONTH, idempotency, ...by([b.id]) });
      expect(result).toMatchObject({ replayed: true, receipt: { id: first.id } });
      expect(await records().get(s.tenantA(), a.id)).toMatchObject({ superseded_by: first.id });
      expect(await records().get(s.tenantA(), b.id)).toEqual(b);
    });

    test('delete and forget take superseded records like any other; import keeps version, updated_at and superseded_by', async () => {
      const old = await s.put(s.tenantA(), { agent_id: 'x', title: 'zephyr old' });
      const gone = await s.put(s.tenantA(), { agent_id: 'y', title: 'zephyr gone' });
      const n = await write(s.tenantA(), { agent_id: 'z', title: 'zephyr new' }, by([old.id, gone.id]));
      await records().update(s.tenantA(), old.id, { body: 'corrected' }, { at: at() });
      expect(await records().delete(s.tenantA(), gone.id)).not.toBeNull();
      expect(await records().forget(s.tenantA(), { agent_id: 'x' }, { dryRun: true, at: at() })).toEqual({ kind: 'done', matched: 1, deleted: 0 });
      const exported = await records().list(s.tenantA(), { filters: { include_superseded: true }, order: 'asc', limit: 10 });
      expect(exported.map((r) => [r.id, r.version, r.superseded_by])).toEqual([[old.id, 2, n.id], [n.id, 1, null]]);
      expect(await records().forget(s.tenantA(), { agent_id: 'x' }, { dryRun: false, at: at() })).toEqual({ kind: 'done', matched: 1, deleted: 1 });
      expect(await records().get(s.tenantA(), old.id)).toBeNull();
      expect(ids(await s.search(s.tenantA(), { q: 'zephyr', include_superseded: true }))).toEqual([n.id]);
      // Into a tenant that holds none of them (ids are unique across the service: the originals go first).
      await records().delete(s.tenantA(), n.id);
      await s.f().settle();
      const fresh = (await s.f().keys.createTenant({ name: 'c', limits: { recordQuota: 10, queryQuota: 10, rate: 1, burst: 1 } })).tenant_id;
      expect(await records().import(fresh, exported)).toMatchObject({ imported: 2 });
      for (const r of exported) expect(await records().get(fresh, r.id)).toEqual({ ...r, tenant_id: fresh });
      expect(ids(await s.search(fresh, { q: 'zephyr' }))).toEqual([n.id]);
      expect(ids(await s.search(fresh, { q: 'corrected', include_superseded: true }))).toEqual([old.id]);
    });
  });
}
