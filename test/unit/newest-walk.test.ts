import fc from 'fast-check';
import { openSqliteAdapters, type SqliteAdapters } from '../../shared/adapters/local/index.js';
import { newestEdgeSql, newestRecordsSql, newestWalkWork, SqliteSearchIndex } from '../../shared/adapters/local/search-index.js';
import { matchesFilters, positionBefore } from '../../shared/domain/listing.js';
import { newRecord, type RecordType, type StoredRecord } from '../../shared/domain/record.js';
import type { SearchQuery } from '../../shared/ports.js';

/**
 * A search without `q` by a type or a client, on the caller's thread (`searchWithin`): it walks at most the
 * `newestWalk` newest records of its range, and answers only when the answer is all there, which is
 * then the unbounded walk's (`search`, as a search thread runs it). Checked against a plain model of the
 * walk over random records: every tie of times, supersedes, agents and ranges, and walks of a few records.
 */

const TENANT = '0193a000-0000-7000-8000-000000000001';
const OTHER = '0193a000-0000-7000-8000-0000000000aa';
const TYPES: RecordType[] = ['fact', 'decision', 'signal'];
const CLIENTS = ['Acme', 'Globex', null];
const TIMES = Array.from({ length: 6 }, (_, i) => new Date(Date.UTC(2026, 10, 20, 10, i)).toISOString());

const specArb = fc.record({
  tenant: fc.integer({ min: 0, max: 4 }).map((n) => (n === 0 ? 1 : 0)),
  agent: fc.integer({ min: 0, max: 1 }),
  type: fc.integer({ min: 0, max: 2 }),
  client: fc.integer({ min: 0, max: 2 }),
  time: fc.integer({ min: 0, max: TIMES.length - 1 }),
  superseded: fc.boolean(),
});

const queryArb = fc
  .record({
    type: fc.option(fc.constantFrom(...TYPES), { nil: undefined }),
    client: fc.option(fc.constantFrom('Acme', 'Globex'), { nil: undefined }),
    agent_id: fc.option(fc.constantFrom('agent-0', 'agent-1'), { nil: undefined }),
    since: fc.option(fc.constantFrom(...TIMES), { nil: undefined }),
    until: fc.option(fc.constantFrom(...TIMES), { nil: undefined }),
    include_superseded: fc.option(fc.boolean(), { nil: undefined }),
    limit: fc.integer({ min: 1, max: 10 }),
  })
  .filter((q) => q.type !== undefined || q.client !== undefined);

const walkArb = fc.integer({ min: 1, max: 12 });

/** The newest first, as the index orders them: by created_at, then id (the listing's order, reversed). */
const newestFirst = (a: StoredRecord, b: StoredRecord) => (positionBefore(a, b) ? 1 : -1);

/** What the walk answers, by the model: whether the range ends within it, or its newest hold `limit` matches. */
function modelAnswer(records: StoredRecord[], q: SearchQuery, walk: number): 'answered' | 'left to the threads' {
  const { agent_id, since, until } = q;
  const range = records.filter((r) => r.tenant_id === TENANT && matchesFilters(r, { agent_id: agent_id ?? undefined, since, until, include_superseded: true })).sort(newestFirst);
  const filters = { type: q.type ?? undefined, client: q.client ?? undefined, include_superseded: q.include_superseded === true ? (true as const) : undefined };
  return range.length <= walk || range.slice(0, walk).filter((r) => matchesFilters(r, filters)).length >= q.limit ? 'answered' : 'left to the threads';
}

/** The property, with the index given `walked` for the model's `walk` (the same, unless a test plants a bug). */
function walkProperty(walked: (walk: number) => number = (walk) => walk) {
  return fc.asyncProperty(fc.array(specArb, { maxLength: 60, size: 'max' }), fc.array(queryArb, { minLength: 1, maxLength: 8 }), walkArb, async (specs, queries, walk) => {
    const adapters: SqliteAdapters = openSqliteAdapters(':memory:');
    try {
      const records: StoredRecord[] = [];
      for (const [i, s] of specs.entries()) {
        const tenant = s.tenant === 1 ? OTHER : TENANT;
        const record = newRecord(tenant, { agent_id: `agent-${s.agent}`, type: TYPES[s.type]!, title: `note ${i}`, body: `body ${i}`, client: CLIENTS[s.client] ?? null }, new Date(TIMES[s.time]!));
        await adapters.records.create(tenant, record, { recordQuota: 1000, month: '2026-11' });
        const supersededBy = s.superseded ? '0193a000-0000-7000-8000-0000000000ff' : null;
        if (supersededBy) adapters.db.prepare('UPDATE records SET superseded_by = ? WHERE id = ?').run(supersededBy, record.id);
        records.push({ ...record, superseded_by: supersededBy });
      }
      const index = new SqliteSearchIndex(adapters.db, { newestWalk: walked(walk) });
      const most = newestWalkWork(walked(walk));
      for (const q of queries) {
        const query: SearchQuery = { text: null, ...q };
        const full = await index.search(TENANT, query);
        const answer = index.searchWithin(TENANT, query, most);
        expect({ query, answer: answer === undefined ? 'left to the threads' : 'answered' }).toEqual({ query, answer: modelAnswer(records, query, walk) });
        if (answer !== undefined) expect(answer).toEqual(full);
        // Allowed less work than its walk, it is left to the threads.
        expect(index.searchWithin(TENANT, query, most - 1)).toBeUndefined();
      }
    } finally {
      adapters.close();
    }
  });
}

test('a walk of the newest records answers exactly when its answer is all there, and then as the unbounded walk does', async () => {
  await fc.assert(walkProperty(), { numRuns: Number(process.env.PROPERTY_RUNS ?? 150) });
}, 120_000);

test('a walk one record longer than the model says (a planted bug) fails the property', async () => {
  let failure = 'the property held';
  try {
    await fc.assert(walkProperty((walk) => walk + 1), { numRuns: 150, endOnFailure: true });
  } catch (error) {
    failure = `${(error as Error).message}\n${String((error as Error).cause)}`;
  }
  // It answered where the walk the model follows had too few matches.
  expect(failure).toMatch(/answered|left to the threads/);
}, 120_000);

test('the walk reads one range of the index a search without q walks: to its edge, then down to it, newest first', () => {
  const adapters = openSqliteAdapters(':memory:');
  try {
    const since = TIMES[1]!;
    const until = TIMES[4]!;
    const shapes: [Partial<SearchQuery>, string][] = [
      [{ client: 'Acme' }, 'records_tenant_created \\(tenant_id=\\?'],
      [{ type: 'fact', since }, 'records_tenant_created \\(tenant_id=\\?'],
      [{ client: 'Acme', since, until }, 'records_tenant_created \\(tenant_id=\\?'],
      [{ agent_id: 'agent-0', client: 'Acme' }, 'records_tenant_agent_created \\(tenant_id=\\? AND agent_id=\\?'],
      [{ agent_id: 'agent-0', type: 'fact', until, include_superseded: true }, 'records_tenant_agent_created \\(tenant_id=\\? AND agent_id=\\?'],
    ];
    for (const [filters, index] of shapes) {
      const query: SearchQuery = { text: null, limit: 20, ...filters };
      const plan = ({ sql, values }: { sql: string; values: unknown[] }, more: unknown[]) =>
        (adapters.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(TENANT, ...values, ...more) as { detail: string }[]).map((r) => r.detail);
      // The edge: entries of the index alone (covering), no sort.
      expect(plan(newestEdgeSql(query), [10])).toEqual([expect.stringMatching(new RegExp(`^SEARCH r USING COVERING INDEX ${index}`))]);
      // The walk: the same index, bounded below by the edge, no sort.
      expect(plan(newestRecordsSql(query, { from: true }), ['2026-11-20T10:00:00.000Z', 'x', 10])).toEqual([
        expect.stringMatching(new RegExp(`^SEARCH r USING INDEX ${index}.* AND \\(created_at,id\\)>\\(\\?,\\?\\)`)),
      ]);
    }
  } finally {
    adapters.close();
  }
});
