import { expect } from '@jest/globals';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openReadOnlyDatabase, type Db } from '../../shared/adapters/local/database.js';
import { SqliteDocumentIndex } from '../../shared/adapters/local/document-index.js';
import { openSqliteAdapters, type SqliteAdapters } from '../../shared/adapters/local/index.js';
import { SqlitePostingStorage } from '../../shared/adapters/local/posting-storage.js';
import { SqliteSearchIndex } from '../../shared/adapters/local/search-index.js';
import { mergeBacklogAtOpen, SearchMerge, type MergeBatch } from '../../shared/adapters/local/search-merge.js';
import type { SearchMerger } from '../../shared/adapters/local/search-merger.js';
import { parseQuery } from '../../shared/domain/query-parse.js';
import { rankFromScore } from '../../shared/domain/rank.js';
import { newRecord, type RecordType, type StoredRecord } from '../../shared/domain/record.js';
import type { ForgetOutcome, ForgetSelectors, RecordStore, SearchIndex } from '../../shared/ports.js';
import { indexProblems } from '../support/index-invariants.js';
import { oracleSearch } from '../support/search-oracle.js';

/**
 * The model of the local search index, for a model-based test (fast-check's `fc.commands`): the record
 * store's writes, deletes, forgets, imports and tenant erases, the AWS-shaped path's new texts, the merge
 * stepped a few terms at a time, restarts, and crashes in the middle of a merge's transaction, in whatever
 * order fast-check draws them, against a model that is a plain list of the live records. After every
 * command:
 * - each live record is found by a search for the word unique to it (on the writer's connection and on a
 *   reader's, as a search thread has), by GET, and in the listing; no deleted one by any of them;
 * - the index is exactly what the records make (test/support/index-invariants.ts): statistics, every
 *   term's postings with positions, block metas, merge marks;
 * - the top k of a few queries equals the brute-force oracle's, to the rank.
 */

const TENANTS = ['0190f0a0-0000-7000-8000-000000000001', '0190f0a0-0000-7000-8000-000000000002'];
const AGENTS = ['ada', 'bob'];
const TYPES: RecordType[] = ['fact', 'decision'];
/** Few words, so that terms are shared, ties happen and stems meet ("moved", "moves"). */
const WORDS = ['user', 'moved', 'moves', 'berlin', 'lunch', 'prefers', 'dark', 'mode', 'release', 'notes', 'deploy', 'invoice', 'sam', 'meeting', 'the'];
const QUERIES = ['When did the user move to Berlin?', 'what does Sam prefer for lunch', '"release notes" deploy', 'dark mode'];
/** The word every record of a bulk import holds: more than a block of postings (128), so blocks seal and split. */
const BULK_WORD = 'ledger';
const BULK = 140;
const BASE = Date.UTC(2026, 0, 1);
const FUTURE = Date.UTC(2031, 0, 1);
const WRITE = { recordQuota: 1e9, month: '2026-01' };
const MANUAL: SearchMerger = { wake: () => undefined, close: async () => undefined };

interface ModelRecord {
  id: string;
  tenant: number;
  agent: string;
  type: RecordType;
  title: string;
  body: string;
  created_at: string;
  /** The word only this record's current text holds. */
  token: string;
}

interface Model {
  live: ModelRecord[];
  /** Ids that are gone, and words that no record holds any more: no read may return them. */
  goneIds: string[];
  goneTokens: string[];
  words: number;
  clock: number;
}

/**
 * What the model drives: a record store, the way a record gets a new text, the searches to check, and the
 * SQLite index's connection, on which the merge is stepped and the invariants are checked. The SQLite
 * system (below) is the embedded default; aws-shaped-system.ts is DynamoDB Local with its stream feeding
 * the index.
 */
export interface ModelSystem {
  readonly records: RecordStore;
  /** Gives a stored record a new text, as the AWS-shaped mode's stream does (SqliteDocumentIndex). */
  changeText(record: StoredRecord): Promise<void>;
  /** The searches to check, each by a name for the report. */
  searchers(): [string, SearchIndex][];
  /** A connection to the SQLite index that the merge steps and the invariant checks use. */
  indexDb(): Db;
  /** Waits until every change so far has reached the index (at once on SQLite). */
  settle(): Promise<void>;
  /** Closes everything and opens it again on the same data, as a process restart does. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** The embedded default on a file: the SQLite adapters, with a reader's connection beside them as a search thread has. */
export function sqliteSystem(file: string, plant: (db: Db) => void = () => undefined): ModelSystem {
  let adapters: SqliteAdapters;
  let documents: SqliteDocumentIndex;
  let reader: { db: Db; search: SqliteSearchIndex };
  const open = () => {
    adapters = openSqliteAdapters(file, { merger: () => MANUAL });
    plant(adapters.db);
    documents = new SqliteDocumentIndex(adapters.db);
    const db = openReadOnlyDatabase(file);
    reader = { db, search: new SqliteSearchIndex(db) };
  };
  const close = () => {
    reader.db.close();
    adapters.close();
  };
  open();
  return {
    get records() {
      return adapters.records;
    },
    changeText: async (record) => expect(await documents.apply([{ kind: 'upsert', record }])).toEqual([null]),
    searchers: () => [['writer', adapters.search], ['reader', reader.search]],
    indexDb: () => adapters.db,
    settle: async () => undefined,
    restart: async () => {
      close();
      open();
    },
    close: async () => close(),
  };
}

/** The system under test and the merge batch the model has under way on its index. */
class Real {
  merge: SearchMerge;
  batch: MergeBatch | null = null;

  constructor(readonly system: ModelSystem) {
    this.merge = new SearchMerge(system.indexDb());
  }

  async restart(): Promise<void> {
    await this.system.restart();
    this.merge = new SearchMerge(this.system.indexDb());
    this.batch = null;
  }
}

type Text = { title: string[]; body: string[]; tokenInTitle: boolean };
const textArb: fc.Arbitrary<Text> = fc.record({
  title: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }),
  body: fc.array(fc.constantFrom(...WORDS), { minLength: 0, maxLength: 8 }),
  tokenInTitle: fc.boolean(),
});

/** Which live record a command acts on: the newest, the oldest, or any; resolved when it runs. */
type Pick = 'newest' | 'oldest' | number;
const pickArb: fc.Arbitrary<Pick> = fc.oneof(fc.constant<Pick>('newest'), fc.constant<Pick>('oldest'), fc.nat());
function picked(m: Model, pick: Pick): ModelRecord {
  const i = pick === 'newest' ? m.live.length - 1 : pick === 'oldest' ? 0 : pick % m.live.length;
  return m.live[i]!;
}

function textOf(m: Model, t: Text, extra: string[] = []): { title: string; body: string; token: string } {
  const token = `tok${m.words++}x`;
  const title = [...t.title, ...(t.tokenInTitle ? [token] : [])].join(' ');
  const body = [...t.body, ...extra, ...(t.tokenInTitle ? [] : [token])].join(' ') || 'empty';
  return { title, body, token };
}

function stored(m: Model, tenant: number, agent: string, type: RecordType, text: { title: string; body: string }, at: number): StoredRecord {
  return newRecord(TENANTS[tenant]!, { agent_id: agent, type, title: text.title, body: text.body }, new Date(at));
}

function forgetLocally(m: Model, gone: (r: ModelRecord) => boolean): void {
  for (const r of m.live.filter(gone)) {
    m.goneIds.push(r.id);
    m.goneTokens.push(r.token);
  }
  m.live = m.live.filter((r) => !gone(r));
}

type Command = fc.AsyncCommand<Model, Real>;

class Write implements Command {
  constructor(readonly tenant: number, readonly agent: string, readonly type: RecordType, readonly text: Text) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const text = textOf(m, this.text);
    const record = stored(m, this.tenant, this.agent, this.type, text, BASE + 1000 * m.clock++);
    await r.system.records.create(TENANTS[this.tenant]!, record, WRITE);
    m.live.push(modelOf(record, this.tenant, text.token));
  }
  toString = () => `write(t${this.tenant}, ${this.agent}, ${JSON.stringify(this.text)})`;
}

/** Writes and deletes sent together: they share the group commit's transaction. */
class Together implements Command {
  constructor(readonly writes: { tenant: number; text: Text }[], readonly deletes: Pick[]) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const targets = [...new Set(m.live.length === 0 ? [] : this.deletes.map((p) => picked(m, p)))];
    const made = this.writes.map(({ tenant, text }) => {
      const t = textOf(m, text);
      return { record: stored(m, tenant, AGENTS[0]!, 'fact', t, BASE + 1000 * m.clock++), tenant, token: t.token };
    });
    await Promise.all([
      ...made.map(({ record }) => r.system.records.create(record.tenant_id, record, WRITE)),
      ...targets.map((t) => r.system.records.delete(TENANTS[t.tenant]!, t.id)),
    ]);
    forgetLocally(m, (x) => targets.includes(x));
    for (const { record, tenant, token } of made) m.live.push(modelOf(record, tenant, token));
  }
  toString = () => `together(${JSON.stringify(this.writes.map((w) => w.tenant))}, delete ${JSON.stringify(this.deletes)})`;
}

class Delete implements Command {
  constructor(readonly pick: Pick) {}
  check = (m: Readonly<Model>) => m.live.length > 0;
  async run(m: Model, r: Real) {
    const target = picked(m, this.pick);
    expect(await r.system.records.delete(TENANTS[target.tenant]!, target.id)).not.toBeNull();
    forgetLocally(m, (x) => x === target);
  }
  toString = () => `delete(${this.pick})`;
}

/** A new text for a stored record, as the AWS-shaped mode's stream brings one (SqliteDocumentIndex). */
class ChangeText implements Command {
  constructor(readonly pick: Pick, readonly text: Text) {}
  check = (m: Readonly<Model>) => m.live.length > 0;
  async run(m: Model, r: Real) {
    const target = picked(m, this.pick);
    const text = textOf(m, this.text);
    const record: StoredRecord = { ...storedOf(target), title: text.title, body: text.body };
    await r.system.changeText(record);
    m.goneTokens.push(target.token);
    Object.assign(target, { title: text.title, body: text.body, token: text.token });
  }
  toString = () => `changeText(${this.pick}, ${JSON.stringify(this.text)})`;
}

class Forget implements Command {
  constructor(readonly tenant: number, readonly agent: string | undefined, readonly beforeSteps: number | undefined) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const at = BASE + 1000 * m.clock++;
    const selectors: ForgetSelectors = { agent_id: this.agent };
    if (this.beforeSteps !== undefined) selectors.before = new Date(BASE + 1000 * this.beforeSteps).toISOString();
    if (this.agent === undefined && this.beforeSteps === undefined) selectors.agent_id = AGENTS[1];
    const until = Math.min(at, this.beforeSteps === undefined ? Infinity : BASE + 1000 * this.beforeSteps);
    const gone = (x: ModelRecord) => x.tenant === this.tenant && (selectors.agent_id === undefined || x.agent === selectors.agent_id) && Date.parse(x.created_at) < until;
    const expected = m.live.filter(gone).length;
    const outcome = await finished(r, this.tenant, await r.system.records.forget(TENANTS[this.tenant]!, selectors, { dryRun: false, at: new Date(at) }));
    expect(outcome).toEqual({ matched: expected, deleted: expected });
    forgetLocally(m, gone);
  }
  toString = () => `forget(t${this.tenant}, agent ${this.agent}, before ${this.beforeSteps})`;
}

/** A forget by ids: the named records of the tenant go, whatever their creation time; an id that is gone or another tenant's is no match. */
class ForgetIds implements Command {
  constructor(readonly tenant: number, readonly picks: Pick[], readonly withGone: boolean) {}
  check = (m: Readonly<Model>) => m.live.length > 0;
  async run(m: Model, r: Real) {
    const named = [...new Set(this.picks.map((p) => picked(m, p)))];
    const ids = named.map((x) => x.id);
    if (this.withGone && m.goneIds.length > 0) ids.push(m.goneIds[0]!);
    const gone = (x: ModelRecord) => x.tenant === this.tenant && named.includes(x);
    const expected = m.live.filter(gone).length;
    const outcome = await finished(r, this.tenant, await r.system.records.forget(TENANTS[this.tenant]!, { ids }, { dryRun: false, at: new Date(BASE + 1000 * m.clock++) }));
    expect(outcome).toEqual({ matched: expected, deleted: expected });
    forgetLocally(m, gone);
  }
  toString = () => `forgetIds(t${this.tenant}, ${JSON.stringify(this.picks)}${this.withGone ? ', and a gone id' : ''})`;
}

/** An import: ids and creation times kept (some in the future); `bulk` imports more than a block of postings of one word. */
class Import implements Command {
  constructor(readonly tenant: number, readonly texts: Text[], readonly future: boolean, readonly bulk: boolean, readonly again: boolean) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const texts = this.bulk ? Array.from({ length: BULK }, (_, i) => this.texts[i % this.texts.length]!) : this.texts;
    const made = texts.map((t) => {
      const text = textOf(m, t, this.bulk ? [BULK_WORD] : []);
      const at = this.future ? FUTURE + 1000 * m.clock++ : BASE + 1000 * m.clock++;
      return { record: stored(m, this.tenant, AGENTS[1]!, 'decision', text, at), token: text.token };
    });
    const records = made.map((x) => x.record);
    // A record of the tenant already stored is skipped: the import runs again without change.
    const mine = m.live.find((x) => x.tenant === this.tenant);
    if (this.again && mine) records.push(storedOf(mine));
    const result = await r.system.records.import(TENANTS[this.tenant]!, records);
    expect(result).toEqual({ imported: made.length, skipped: this.again && mine ? 1 : 0, taken: 0 });
    for (const { record, token } of made) m.live.push(modelOf(record, this.tenant, token));
  }
  toString = () => `import(t${this.tenant}, ${this.bulk ? BULK : this.texts.length} records${this.future ? ', future' : ''}${this.again ? ', one again' : ''})`;
}

class EraseTenant implements Command {
  constructor(readonly tenant: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const expected = m.live.filter((x) => x.tenant === this.tenant).length;
    const erased = await r.system.records.eraseTenant(TENANTS[this.tenant]!);
    expect(erased.records).toBe(expected);
    forgetLocally(m, (x) => x.tenant === this.tenant);
  }
  toString = () => `eraseTenant(t${this.tenant})`;
}

/** One step of the merge: a new batch of at most `maxDocs` records if none is under way, then `terms` of its terms. */
class MergeStep implements Command {
  constructor(readonly maxDocs: number, readonly terms: number) {}
  check = () => true;
  async run(_m: Model, r: Real) {
    await r.system.settle();
    r.batch ??= r.merge.begin(this.maxDocs);
    if (!r.batch) return;
    if (r.batch.step({ terms: this.terms }) !== 'again') r.batch = null;
  }
  toString = () => `mergeStep(${this.maxDocs}, ${this.terms})`;
}

class MergeAll implements Command {
  check = () => true;
  async run(_m: Model, r: Real) {
    while (r.batch && r.batch.step() === 'again');
    r.batch = null;
    while (r.merge.next(50) > 0);
  }
  toString = () => 'mergeAll';
}

/** Close and open again; the batch under way is abandoned. With `atOpen`, the backlog is merged at open, as the server does. */
class Restart implements Command {
  constructor(readonly atOpen: boolean) {}
  check = () => true;
  async run(_m: Model, r: Real) {
    await r.restart();
    if (this.atOpen) mergeBacklogAtOpen(r.system.indexDb(), () => undefined, { minDocs: 1, batch: 7 });
  }
  toString = () => `restart(${this.atOpen ? 'merging at open' : 'plain'})`;
}

/**
 * A crash in the middle of a merge step's transaction: a merge of the next batch whose storage fails after
 * `writes` of its writes, then the process is gone (close and open, without anything it had in memory).
 */
class Crash implements Command {
  constructor(readonly maxDocs: number, readonly writes: number) {}
  check = () => true;
  async run(_m: Model, r: Real) {
    await r.system.settle();
    const storage = failingAfter(new SqlitePostingStorage(r.system.indexDb()), this.writes);
    const batch = new SearchMerge(r.system.indexDb(), storage).begin(this.maxDocs);
    try {
      while (batch && batch.step({ terms: 3 }) === 'again');
    } catch (error) {
      expect(error).toBe(CRASH);
    }
    await r.restart();
  }
  toString = () => `crash(batch of ${this.maxDocs}, after ${this.writes} writes)`;
}

const CRASH = new Error('crash');

/** A forget's counts once it is done: at once, or when its job has finished (DynamoDB hands a large one to a job). */
async function finished(r: Real, tenant: number, outcome: ForgetOutcome): Promise<{ matched: number; deleted: number }> {
  if (outcome.kind === 'done') return { matched: outcome.matched, deleted: outcome.deleted };
  for (;;) {
    const status = await r.system.records.forgetJob(TENANTS[tenant]!, outcome.job_id);
    if (status && status.status !== 'running') return { matched: status.matched, deleted: status.deleted };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A posting storage whose writes throw once `writes` of them have gone through. */
function failingAfter(storage: SqlitePostingStorage, writes: number): SqlitePostingStorage {
  let left = writes;
  return new Proxy(storage, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (String(key).startsWith('set') && left-- <= 0) throw CRASH;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

function modelOf(record: StoredRecord, tenant: number, token: string): ModelRecord {
  return { id: record.id, tenant, agent: record.agent_id, type: record.type, title: record.title, body: record.body, created_at: record.created_at, token };
}

function storedOf(x: ModelRecord): StoredRecord {
  return { id: x.id, tenant_id: TENANTS[x.tenant]!, agent_id: x.agent, type: x.type, title: x.title, body: x.body, client: null, metadata: null, created_at: x.created_at, classification: null };
}

/** Every check, after every command. */
async function checkAll(m: Model, r: Real): Promise<void> {
  await r.system.settle();
  expect(indexProblems(r.system.indexDb())).toEqual([]);
  const searchers = r.system.searchers();
  for (const [tenant, tenantId] of TENANTS.entries()) {
    const live = m.live.filter((x) => x.tenant === tenant);
    const listed = await r.system.records.list(tenantId, { filters: {}, order: 'asc', limit: 100_000 });
    expect(listed.map((x) => x.id).sort()).toEqual(live.map((x) => x.id).sort());
    for (const x of live) {
      const got = await r.system.records.get(tenantId, x.id);
      expect(got && { title: got.title, body: got.body, created_at: got.created_at }).toEqual({ title: x.title, body: x.body, created_at: x.created_at });
      for (const [name, search] of searchers) {
        const hits = await search.search(tenantId, { text: parseQuery(x.token), limit: 5 });
        expect([name, x.token, hits.map((h) => h.id)]).toEqual([name, x.token, [x.id]]);
      }
    }
    // The oracle ranks the live records from their text alone; document numbers are their seq.
    const seqOf = r.system.indexDb().prepare<[string], number>('SELECT seq FROM records WHERE id = ?').pluck();
    const documents = live.map((x) => ({ doc: seqOf.get(x.id)!, title: x.title, body: x.body, id: x.id })).sort((a, b) => a.doc - b.doc);
    const idOf = new Map(documents.map((d) => [d.doc, d.id]));
    // Filters too: an agent's, and a `since` that the newest-block bounds (search_newest) may skip by.
    const since = new Date(BASE + 1000 * Math.floor(m.clock / 2)).toISOString();
    const byDoc = new Map(documents.map((d) => [d.doc, live.find((x) => x.id === d.id)!]));
    const filters = [
      { name: 'none', query: {}, accept: () => true },
      { name: 'agent', query: { agent_id: AGENTS[1] }, accept: (x: ModelRecord) => x.agent === AGENTS[1] },
      { name: 'since', query: { since }, accept: (x: ModelRecord) => x.created_at >= since },
    ];
    for (const q of QUERIES) {
      const text = parseQuery(q)!;
      for (const f of filters) {
        const expected = oracleSearch(documents, text, 5, { accept: (doc) => f.accept(byDoc.get(doc)!) }).map((h) => `${idOf.get(h.doc)}@${rankFromScore(h.score)}`);
        for (const [name, search] of searchers) {
          const hits = await search.search(tenantId, { text, limit: 5, ...f.query });
          expect([name, q, f.name, hits.map((h) => `${h.id}@${h.rank}`)]).toEqual([name, q, f.name, expected]);
        }
      }
    }
  }
  for (const id of m.goneIds) for (const tenantId of TENANTS) expect(await r.system.records.get(tenantId, id)).toBeNull();
  for (const token of m.goneTokens) {
    for (const tenantId of TENANTS) for (const [, search] of searchers) expect((await search.search(tenantId, { text: parseQuery(token), limit: 5 })).map((h) => h.id)).toEqual([]);
  }
}

/** Runs the command, then every check. */
function checked(command: Command): Command {
  return {
    check: (m) => command.check(m),
    run: async (m, r) => {
      await command.run(m, r);
      await checkAll(m, r);
    },
    toString: () => command.toString(),
  };
}

const tenantArb = fc.integer({ min: 0, max: TENANTS.length - 1 });
const commands = [
  fc.tuple(tenantArb, fc.constantFrom(...AGENTS), fc.constantFrom(...TYPES), textArb).map(([t, a, ty, x]) => new Write(t, a, ty, x)),
  fc.tuple(tenantArb, fc.constantFrom(...AGENTS), fc.constantFrom(...TYPES), textArb).map(([t, a, ty, x]) => new Write(t, a, ty, x)),
  fc.tuple(fc.array(fc.record({ tenant: tenantArb, text: textArb }), { maxLength: 4 }), fc.array(pickArb, { maxLength: 3 })).map(([w, d]) => new Together(w, d)),
  pickArb.map((p) => new Delete(p)),
  fc.tuple(pickArb, textArb).map(([p, x]) => new ChangeText(p, x)),
  fc.tuple(tenantArb, fc.option(fc.constantFrom(...AGENTS), { nil: undefined }), fc.option(fc.nat({ max: 60 }), { nil: undefined })).map(([t, a, b]) => new Forget(t, a, b)),
  fc.tuple(tenantArb, fc.array(pickArb, { minLength: 1, maxLength: 4 }), fc.boolean()).map(([t, p, g]) => new ForgetIds(t, p, g)),
  fc.tuple(tenantArb, fc.array(textArb, { minLength: 1, maxLength: 4 }), fc.boolean(), fc.double({ min: 0, max: 1, noNaN: true }), fc.boolean()).map(
    ([t, x, f, bulk, again]) => new Import(t, x, f, bulk < 0.15, again),
  ),
  tenantArb.map((t) => new EraseTenant(t)),
  fc.tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 6 })).map(([d, t]) => new MergeStep(d, t)),
  fc.tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 6 })).map(([d, t]) => new MergeStep(d, t)),
  fc.tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 6 })).map(([d, t]) => new MergeStep(d, t)),
  fc.constant(new MergeAll()),
  fc.boolean().map((atOpen) => new Restart(atOpen)),
  fc.tuple(fc.integer({ min: 1, max: 40 }), fc.nat({ max: 40 })).map(([d, w]) => new Crash(d, w)),
].map((arb) => arb.map(checked));

export interface ModelRunOptions {
  seed: number;
  runs: number;
  maxCommands: number;
  /** Opens a fresh system for a run (in `dir`, a new empty folder); the SQLite system unless given. */
  system?: (dir: string) => Promise<ModelSystem>;
  /** For the SQLite system: done to the database at every open, how a test plants a bug to see the model catch it. */
  plant?: (db: Db) => void;
}

/** Runs the model: throws fast-check's report (the seed, the shrunk commands, what failed) when a run fails. */
export async function runSearchIndexModel({ seed, runs, maxCommands, plant, system }: ModelRunOptions): Promise<void> {
  const open = system ?? (async (dir: string) => sqliteSystem(join(dir, 'memory.db'), plant));
  await fc.assert(
    fc.asyncProperty(fc.commands(commands, { maxCommands, size: 'max' }), async (cmds) => {
      const dir = mkdtempSync(join(tmpdir(), 'memory-model-'));
      const real = new Real(await open(dir));
      try {
        await fc.asyncModelRun(() => ({ model: { live: [], goneIds: [], goneTokens: [], words: 0, clock: 0 }, real }), cmds);
      } finally {
        await real.system.close();
        rmSync(dir, { recursive: true, force: true });
      }
    }),
    { seed, numRuns: runs },
  );
}
