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
import { mergeBacklogAtOpen, SearchMerge } from '../../shared/adapters/local/search-merge.js';
import type { SearchMerger } from '../../shared/adapters/local/search-merger.js';
import type { RecordType, StoredRecord } from '../../shared/domain/record.js';
import type { ForgetOutcome, ForgetSelectors, SearchIndex } from '../../shared/ports.js';
import { checkAll } from './model-checks.js';
import {
  AGENTS,
  BASE,
  Real,
  TENANTS,
  TYPES,
  WRITE,
  forgetLocally,
  goneIdOf,
  modelOf,
  BULK_WORD,
  pickArb,
  picked,
  stored,
  storedOf,
  tenantArb,
  textArb,
  textOf,
  thenCheck,
  type Command,
  type Model,
  type ModelRecord,
  type ModelSystem,
  type Pick,
  type Text,
} from './model-parts.js';
import { applyUpdates, updateArb, updateCommands, type UpdateSpec } from './update-commands.js';

export type { ModelSystem } from './model-parts.js';

/**
 * The model of the local search index, for a model-based test (fast-check's `fc.commands`): the record
 * store's writes, updates (update-commands.ts), supersedes, deletes, forgets, imports and tenant erases,
 * the AWS-shaped path's new texts, the merge stepped a few terms at a time, restarts, and crashes in the
 * middle of a merge's transaction, in whatever order fast-check draws them, against a model that is a
 * plain list of the live records. After every command:
 * - each live record is found by a search for the word unique to it (on the writer's connection, there also
 *   as the search pool runs it on the server's thread, and on a reader's, as a search thread has; only with
 *   include_superseded once superseded), by GET, and in the listing; no deleted one, nor an old text, by
 *   any of them;
 * - the index is exactly what the records make (test/support/index-invariants.ts): statistics, every
 *   term's postings with positions, block metas, merge marks;
 * - the top k of a few queries equals the brute-force oracle's, to the rank.
 * model-checks.ts has the checks.
 */

const BULK = 140;
const FUTURE = Date.UTC(2031, 0, 1);
const MANUAL: SearchMerger = { wake: () => undefined, close: async () => undefined };

/** How many of the newest records the bounded searcher walks for a search without `q` by a type. */
const NEWEST_WALKED = 4;

/**
 * The writer's engine as the search pool runs a search on the server's thread (`searchWithin`): the bound of
 * its work and the search in one snapshot, the search reading the heads and metas the bound read. Every
 * search with `q` the model makes is bounded (a word or two), so an unbounded one is a failure. One without
 * `q` by a type walks the NEWEST_WALKED newest records of its range and, when its answer is not all there,
 * is left to the unbounded walk, as the pool leaves it to a search thread.
 */
function boundedSearch(index: SqliteSearchIndex): SearchIndex {
  return {
    search: async (tenantId, query) => {
      const hits = index.searchWithin(tenantId, query, Number.MAX_SAFE_INTEGER);
      if (hits) return hits;
      if (query.text === null) return index.search(tenantId, query);
      throw new Error(`searchWithin found no bound for ${JSON.stringify(query)}`);
    },
  };
}

/**
 * The embedded default on a file: the SQLite adapters, with a reader's connection beside them as a search
 * thread has. The reader leaves superseded records out one candidate at a time (excludedMax 1), the writer
 * by their list read before the search: both ways are checked.
 */
export function sqliteSystem(file: string, plant: (db: Db) => void = () => undefined): ModelSystem {
  let adapters: SqliteAdapters;
  let documents: SqliteDocumentIndex;
  let reader: { db: Db; search: SqliteSearchIndex };
  let bounded: SqliteSearchIndex;
  const open = () => {
    adapters = openSqliteAdapters(file, { merger: () => MANUAL });
    plant(adapters.db);
    bounded = new SqliteSearchIndex(adapters.db, { newestWalk: NEWEST_WALKED });
    documents = new SqliteDocumentIndex(adapters.db);
    const db = openReadOnlyDatabase(file);
    reader = { db, search: new SqliteSearchIndex(db, { excludedMax: 1 }) };
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
    searchers: () => [
      ['writer', adapters.search],
      ['writer, bound and search in one snapshot', boundedSearch(bounded)],
      ['reader', reader.search],
    ],
    indexDb: () => adapters.db,
    settle: async () => undefined,
    restart: async () => {
      close();
      open();
    },
    close: async () => close(),
  };
}

class Write implements Command {
  constructor(readonly tenant: number, readonly agent: string, readonly type: RecordType, readonly text: Text) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const text = textOf(m, this.text);
    const record = stored(this.tenant, this.agent, this.type, text, BASE + 1000 * m.clock++);
    await r.system.records.create(TENANTS[this.tenant]!, record, WRITE);
    m.live.push(modelOf(record, this.tenant, text.token));
  }
  toString = () => `write(t${this.tenant}, ${this.agent}, ${JSON.stringify(this.text)})`;
}

/** Writes, deletes and updates (of other records) sent together: they share the group commit's transaction. */
class Together implements Command {
  constructor(readonly writes: { tenant: number; text: Text }[], readonly deletes: Pick[], readonly updates: UpdateSpec[]) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const targets = [...new Set(m.live.length === 0 ? [] : this.deletes.map((p) => picked(m, p)))];
    const made = this.writes.map(({ tenant, text }) => {
      const t = textOf(m, text);
      return { record: stored(tenant, AGENTS[0]!, 'fact', t, BASE + 1000 * m.clock++), tenant, token: t.token };
    });
    await Promise.all([
      ...made.map(({ record }) => r.system.records.create(record.tenant_id, record, WRITE)),
      ...targets.map((t) => r.system.records.delete(TENANTS[t.tenant]!, t.id)),
      applyUpdates(m, r, this.updates, targets.map((t) => t.id)),
    ]);
    forgetLocally(m, (x) => targets.includes(x));
    for (const { record, tenant, token } of made) m.live.push(modelOf(record, tenant, token));
  }
  toString = () =>
    `together(${JSON.stringify(this.writes.map((w) => w.tenant))}, delete ${JSON.stringify(this.deletes)}, update ${JSON.stringify(this.updates.map((u) => [u.pick, u.text !== null]))})`;
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
    // The record as stored, with every field the model does not follow (the stream brings the whole item).
    const current = await r.system.records.get(TENANTS[target.tenant]!, target.id);
    const record: StoredRecord = { ...current!, title: text.title, body: text.body };
    await r.system.changeText(record);
    m.goneTokens.push({ tenant: target.tenant, token: target.token });
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
    const goneId = this.withGone ? goneIdOf(m, this.tenant) : undefined;
    if (goneId !== undefined) ids.push(goneId);
    // By id within the tenant: a record of another tenant names the tenant's copy of it, if it has one.
    const gone = (x: ModelRecord) => x.tenant === this.tenant && ids.includes(x.id);
    const expected = m.live.filter(gone).length;
    const outcome = await finished(r, this.tenant, await r.system.records.forget(TENANTS[this.tenant]!, { ids }, { dryRun: false, at: new Date(BASE + 1000 * m.clock++) }));
    expect(outcome).toEqual({ matched: expected, deleted: expected });
    forgetLocally(m, gone);
  }
  toString = () => `forgetIds(t${this.tenant}, ${JSON.stringify(this.picks)}${this.withGone ? ', and a gone id' : ''})`;
}

/**
 * An import: ids and creation times kept (some in the future); `bulk` imports more than a block of postings of
 * one word; `again`, one of the tenant's own records, which is skipped; `copy`, a record of another tenant as
 * stored, which the tenant does not hold: the same id, a record of its own (ids are each tenant's own).
 */
class Import implements Command {
  constructor(
    readonly tenant: number,
    readonly texts: Text[],
    readonly future: boolean,
    readonly bulk: boolean,
    readonly again: boolean,
    readonly copy: boolean,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const texts = this.bulk ? Array.from({ length: BULK }, (_, i) => this.texts[i % this.texts.length]!) : this.texts;
    const made = texts.map((t) => {
      const text = textOf(m, t, this.bulk ? [BULK_WORD] : []);
      const at = this.future ? FUTURE + 1000 * m.clock++ : BASE + 1000 * m.clock++;
      return { record: stored(this.tenant, AGENTS[1]!, 'decision', text, at), token: text.token };
    });
    const records = made.map((x) => x.record);
    // A record of the tenant already stored is skipped: the import runs again without change.
    const mine = m.live.find((x) => x.tenant === this.tenant);
    if (this.again && mine) records.push(storedOf(mine));
    const theirs = this.copy ? m.live.find((x) => x.tenant !== this.tenant && !m.live.some((y) => y.tenant === this.tenant && y.id === x.id)) : undefined;
    if (theirs) records.push((await r.system.records.get(TENANTS[theirs.tenant]!, theirs.id))!);
    const result = await r.system.records.import(TENANTS[this.tenant]!, records);
    expect(result).toEqual({ imported: made.length + (theirs ? 1 : 0), skipped: this.again && mine ? 1 : 0 });
    for (const { record, token } of made) m.live.push(modelOf(record, this.tenant, token));
    if (theirs) m.live.push({ ...theirs, tenant: this.tenant });
  }
  toString = () =>
    `import(t${this.tenant}, ${this.bulk ? BULK : this.texts.length} records${this.future ? ', future' : ''}${this.again ? ', one again' : ''}${this.copy ? ", a copy of another tenant's" : ''})`;
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

const commands = [
  fc.tuple(tenantArb, fc.constantFrom(...AGENTS), fc.constantFrom(...TYPES), textArb).map(([t, a, ty, x]) => new Write(t, a, ty, x)),
  fc.tuple(tenantArb, fc.constantFrom(...AGENTS), fc.constantFrom(...TYPES), textArb).map(([t, a, ty, x]) => new Write(t, a, ty, x)),
  fc.tuple(fc.array(fc.record({ tenant: tenantArb, text: textArb }), { maxLength: 4 }), fc.array(pickArb, { maxLength: 3 }), fc.array(updateArb, { maxLength: 3 })).map(
    ([w, d, u]) => new Together(w, d, u),
  ),
  pickArb.map((p) => new Delete(p)),
  fc.tuple(pickArb, textArb).map(([p, x]) => new ChangeText(p, x)),
  fc.tuple(tenantArb, fc.option(fc.constantFrom(...AGENTS), { nil: undefined }), fc.option(fc.nat({ max: 60 }), { nil: undefined })).map(([t, a, b]) => new Forget(t, a, b)),
  fc.tuple(tenantArb, fc.array(pickArb, { minLength: 1, maxLength: 4 }), fc.boolean()).map(([t, p, g]) => new ForgetIds(t, p, g)),
  fc.tuple(tenantArb, fc.array(textArb, { minLength: 1, maxLength: 4 }), fc.boolean(), fc.double({ min: 0, max: 1, noNaN: true }), fc.boolean(), fc.boolean()).map(
    ([t, x, f, bulk, again, copy]) => new Import(t, x, f, bulk < 0.15, again, copy),
  ),
  tenantArb.map((t) => new EraseTenant(t)),
  fc.tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 6 })).map(([d, t]) => new MergeStep(d, t)),
  fc.tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 6 })).map(([d, t]) => new MergeStep(d, t)),
  fc.tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 6 })).map(([d, t]) => new MergeStep(d, t)),
  fc.constant(new MergeAll()),
  fc.boolean().map((atOpen) => new Restart(atOpen)),
  fc.tuple(fc.integer({ min: 1, max: 40 }), fc.nat({ max: 40 })).map(([d, w]) => new Crash(d, w)),
  ...updateCommands,
].map((arb) => arb.map((command) => thenCheck(command, checkAll)));

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
