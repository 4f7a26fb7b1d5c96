import { expect } from '@jest/globals';
import { parseQuery } from '../../shared/domain/query-parse.js';
import { positionBefore } from '../../shared/domain/listing.js';
import { rankFromScore } from '../../shared/domain/rank.js';
import type { SearchQuery } from '../../shared/ports.js';
import { indexProblems } from '../support/index-invariants.js';
import { oracleBest, oracleSearch } from '../support/search-oracle.js';
import { AGENTS, BASE, BULK_WORD, TENANTS, TYPES, type Model, type ModelRecord, type Real } from './model-parts.js';

/** The queries whose top `limit` must be the oracle's; the bulk imports' word's deep, for a search reads its blocks whole. */
const QUERIES: { q: string; limit: number }[] = [
  ...['When did the user move to Berlin?', 'what does Sam prefer for lunch', '"release notes" deploy', 'dark mode'].map((q) => ({ q, limit: 5 })),
  { q: BULK_WORD, limit: 100 },
];
const current = (x: ModelRecord) => x.superseded_by === null;
/** Newest first, as a search without `q` answers: by created_at, then id (the listing's order, reversed). */
const newestFirst = (a: ModelRecord, b: ModelRecord) => (positionBefore(a, b) ? 1 : -1);

/**
 * Every check of the search index's model, after every command:
 * - the index is exactly what the records make (test/support/index-invariants.ts);
 * - each live record is returned by GET as the model has it, is in the listing and found by its own word
 *   (on every searcher) while it is current, and only with include_superseded once superseded;
 * - the top 5 of a few queries, plain, by agent, with `since`, with `until`, and with superseded records, equals the
 *   brute-force oracle's over every live record (a superseded record still counts in the statistics);
 * - without `q`, the 3 newest records of each type, alone and by agent, with superseded records and without,
 *   are the model's (an update may change a record's type);
 * - no gone record or word is returned by anything, superseded records included.
 */
export async function checkAll(m: Model, r: Real): Promise<void> {
  await r.system.settle();
  expect(indexProblems(r.system.indexDb())).toEqual([]);
  // One expect at the end: Jest builds an error (with its stack) for every matcher call, pass or fail, which
  // was a quarter of this test's time when each comparison below was an expect of its own.
  const problems: unknown[] = [];
  // Compared as JSON: the values are strings, numbers, nulls and plain objects built in one key order, and
  // arrays made in Jest's module realm are not deepStrictEqual to the test's own.
  const same = (actual: unknown, expected: unknown) => {
    if (JSON.stringify(actual) !== JSON.stringify(expected)) problems.push({ actual, expected });
  };
  const searchers = r.system.searchers();
  for (const [tenant, tenantId] of TENANTS.entries()) {
    const live = m.live.filter((x) => x.tenant === tenant);
    const listed = async (include_superseded?: true) =>
      (await r.system.records.list(tenantId, { filters: include_superseded ? { include_superseded } : {}, order: 'asc', limit: 100_000 })).map((x) => x.id).sort();
    same(await listed(), live.filter(current).map((x) => x.id).sort());
    same(await listed(true), live.map((x) => x.id).sort());
    for (const x of live) {
      const got = await r.system.records.get(tenantId, x.id);
      const seen = got && { title: got.title, body: got.body, type: got.type, created_at: got.created_at, version: got.version, superseded_by: got.superseded_by };
      same(seen, { title: x.title, body: x.body, type: x.type, created_at: x.created_at, version: x.version, superseded_by: x.superseded_by });
      for (const [name, search] of searchers) {
        const found = async (include_superseded: boolean) => (await search.search(tenantId, { text: parseQuery(x.token), limit: 5, include_superseded })).map((h) => h.id);
        same([name, x.token, await found(false)], [name, x.token, current(x) ? [x.id] : []]);
        same([name, x.token, await found(true)], [name, x.token, [x.id]]);
      }
    }
    // The oracle ranks the live records from their text alone; document numbers are their seq.
    const seqOf = r.system.indexDb().prepare<[string, string], number>('SELECT seq FROM records WHERE tenant_id = ? AND id = ?').pluck();
    const documents = live.map((x) => ({ doc: seqOf.get(tenantId, x.id)!, title: x.title, body: x.body, id: x.id })).sort((a, b) => a.doc - b.doc);
    const idOf = new Map(documents.map((d) => [d.doc, d.id]));
    // Filters too: an agent's, a `since` that the newest-block bounds (search_newest) may skip by, and an
    // `until` at the same instant (often a record's own created_at), which keeps exactly what `since` leaves out.
    const since = new Date(BASE + 1000 * Math.floor(m.clock / 2)).toISOString();
    const byDoc = new Map(documents.map((d) => [d.doc, live.find((x) => x.id === d.id)!]));
    const filters: { name: string; query: Partial<SearchQuery>; accept: (x: ModelRecord) => boolean }[] = [
      { name: 'none', query: {}, accept: current },
      { name: 'agent', query: { agent_id: AGENTS[1] }, accept: (x) => current(x) && x.agent === AGENTS[1] },
      { name: 'since', query: { since }, accept: (x) => current(x) && x.created_at >= since },
      { name: 'until', query: { until: since }, accept: (x) => current(x) && x.created_at < since },
      { name: 'superseded too', query: { include_superseded: true }, accept: () => true },
      { name: 'agent, superseded too', query: { agent_id: AGENTS[1], include_superseded: true }, accept: (x) => x.agent === AGENTS[1] },
    ];
    for (const type of TYPES) {
      for (const agent of [undefined, AGENTS[1]]) {
        for (const include_superseded of [false, true]) {
          const passes = (x: ModelRecord) => x.type === type && (agent === undefined || x.agent === agent) && (include_superseded || current(x));
          const expected = live.filter(passes).sort(newestFirst).slice(0, 3).map((x) => x.id);
          for (const [name, search] of searchers) {
            const hits = await search.search(tenantId, { text: null, type, agent_id: agent, include_superseded, limit: 3 });
            same([name, 'newest', type, agent, include_superseded, hits.map((h) => h.id)], [name, 'newest', type, agent, include_superseded, expected]);
          }
        }
      }
    }
    for (const { q, limit } of QUERIES) {
      const text = parseQuery(q)!;
      for (const f of filters) {
        const best = oracleBest(documents, text);
        const expected = oracleSearch(documents, text, limit, { accept: (doc) => f.accept(byDoc.get(doc)!) }).map((h) => `${idOf.get(h.doc)}@${rankFromScore(h.score, best)}`);
        for (const [name, search] of searchers) {
          const hits = await search.search(tenantId, { text, limit, ...f.query });
          same([name, q, f.name, hits.map((h) => `${h.id}@${h.rank}`)], [name, q, f.name, expected]);
        }
      }
    }
  }
  // What is gone is gone from every tenant, but for a live record of the tenant with the same id or word.
  for (const { id } of m.goneIds) {
    for (const [tenant, tenantId] of TENANTS.entries()) {
      const holder = m.live.find((x) => x.tenant === tenant && x.id === id);
      same([id, tenant, (await r.system.records.get(tenantId, id))?.title ?? null], [id, tenant, holder?.title ?? null]);
    }
  }
  for (const { token } of m.goneTokens) {
    for (const [tenant, tenantId] of TENANTS.entries()) {
      const holders = m.live.filter((x) => x.tenant === tenant && x.token === token).map((x) => x.id);
      for (const [, search] of searchers) same([token, tenant, (await search.search(tenantId, { text: parseQuery(token), limit: 5, include_superseded: true })).map((h) => h.id)], [token, tenant, holders]);
    }
  }
  expect(problems).toEqual([]);
}
