import Database from 'better-sqlite3';
import fc from 'fast-check';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backupDatabase, type BackupOptions, type BackupSummary } from '../../shared/adapters/local/backup.js';
import { openSqliteAdapters, type SqliteAdapters } from '../../shared/adapters/local/index.js';
import { SearchMerge } from '../../shared/adapters/local/search-merge.js';
import { SqliteSearchIndex } from '../../shared/adapters/local/search-index.js';
import type { SearchMerger } from '../../shared/adapters/local/search-merger.js';
import { parseQuery } from '../../shared/domain/query-parse.js';
import { indexProblems } from '../support/index-invariants.js';
import { BASE, stored, TENANTS, WRITE } from './model-parts.js';

/**
 * A backup (shared/adapters/local/backup.ts) is the database as it was when it began, records and search
 * index together, however the writer's writes, deletes, updates and merges fall between its steps. A
 * model-based test (fast-check's `fc.commands`): the model is the list of live records, each with a word
 * of its own; the backup's steps are drawn among the other commands, a few pages each (its progress
 * callback answers 0 pages, which holds it, until a step command lets it go on). When the run ends, the
 * backup is let finish, and the copy must hold exactly the records the model held when it began, each
 * found by a search for its word, with an index exactly what those records make (index-invariants.ts);
 * its progress never went back (no step started the copy again); and it is one file, not in WAL mode.
 * Two backups that do not hold their snapshot, planted below, fail it.
 */

type Backup = (source: string, target: string, options: BackupOptions) => Promise<Pick<BackupSummary, 'records'>>;

interface Live {
  id: string;
  tenant: number;
  title: string;
  body: string;
}

interface Model {
  live: Live[];
  words: number;
  /** The live records when the backup began; null before. */
  atBackup: Live[] | null;
}

const MANUAL: SearchMerger = { wake: () => undefined, close: async () => undefined };

/** A backup under way, its steps let go one command at a time. */
class BackupRun {
  private allowance = 0;
  private unbounded = false;
  private wakeUp: (() => void) | null = null;
  /** The pages copied, each time it changed: a restarted copy would go back. */
  readonly copied: number[] = [];
  readonly done: Promise<Pick<BackupSummary, 'records'>>;
  finished = false;

  constructor(backup: Backup, source: string, readonly target: string) {
    this.done = backup(source, target, {
      progress: (copied) => {
        if (this.copied.at(-1) !== copied) this.copied.push(copied);
        this.wakeUp?.();
        if (this.unbounded) return 1_000_000;
        const pages = this.allowance;
        this.allowance = 0;
        return pages;
      },
    }).finally(() => {
      this.finished = true;
      this.wakeUp?.();
    });
  }

  /** Lets one step of `pages` pages run, and waits until it has (or the copy has ended). */
  async step(pages: number): Promise<void> {
    this.allowance = pages;
    // The progress call after the step: the first call takes the allowance, the next reports the step.
    for (let calls = 0; calls < 2 && !this.finished; calls++) await new Promise<void>((resolve) => (this.wakeUp = resolve));
    this.wakeUp = null;
  }

  finish() {
    this.unbounded = true;
    return this.done;
  }
}

interface Real {
  sqlite: SqliteAdapters;
  /** Counts the writes, deletes, updates and merges made while the copy was under way (some pages copied, not all). */
  stats: { duringCopy: number };
  file: string;
  dir: string;
  backup: Backup;
  run: BackupRun | null;
}

type Command = fc.AsyncCommand<Model, Real>;

const wordOf = (m: Model) => `bkword${m.words++}z`;

/** Counts a change made while the copy is under way. */
function noteChange(r: Real): void {
  if (r.run && !r.run.finished && (r.run.copied.at(-1) ?? 0) > 0) r.stats.duringCopy++;
}

class Write implements Command {
  constructor(readonly tenants: number[]) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const made = this.tenants.map((tenant) => {
      const word = wordOf(m);
      return stored(tenant, 'ada', 'fact', { title: `Note ${word}`, body: `The ${word} release notes mention the deploy.` }, BASE + 1000 * m.words);
    });
    // Sent together, they share the group commit's transaction.
    noteChange(r);
    await Promise.all(made.map((record) => r.sqlite.records.create(record.tenant_id, record, WRITE)));
    for (const record of made) m.live.push({ id: record.id, tenant: TENANTS.indexOf(record.tenant_id), title: record.title, body: record.body });
  }
  toString = () => `write(${JSON.stringify(this.tenants)})`;
}

class Delete implements Command {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>) => m.live.length > 0;
  async run(m: Model, r: Real) {
    const target = m.live[this.pick % m.live.length]!;
    noteChange(r);
    expect(await r.sqlite.records.delete(TENANTS[target.tenant]!, target.id)).not.toBeNull();
    m.live = m.live.filter((x) => x !== target);
  }
  toString = () => `delete(${this.pick})`;
}

/** A new body, with a new word: the record moves to a new seq, and its old words leave the index. */
class Update implements Command {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>) => m.live.length > 0;
  async run(m: Model, r: Real) {
    const i = this.pick % m.live.length;
    const target = m.live[i]!;
    const body = `Corrected: the ${wordOf(m)} notes.`;
    noteChange(r);
    expect(await r.sqlite.records.update(TENANTS[target.tenant]!, target.id, { body }, { at: new Date(BASE + 1000 * m.words) })).not.toBeNull();
    m.live = m.live.map((x, j) => (j === i ? { ...x, body } : x));
  }
  toString = () => `update(${this.pick})`;
}

class Merge implements Command {
  constructor(readonly docs: number) {}
  check = () => true;
  async run(_m: Model, r: Real) {
    noteChange(r);
    new SearchMerge(r.sqlite.db).next(this.docs);
  }
  toString = () => `merge(${this.docs})`;
}

class BeginBackup implements Command {
  check = (m: Readonly<Model>) => m.atBackup === null;
  async run(m: Model, r: Real) {
    r.run = new BackupRun(r.backup, r.file, join(r.dir, 'backup.db'));
    m.atBackup = m.live.map((x) => ({ ...x }));
    // Its first call comes before any page is copied: the snapshot is taken by then.
    await r.run.step(0);
  }
  toString = () => 'beginBackup';
}

class BackupStep implements Command {
  constructor(readonly pages: number) {}
  check = (m: Readonly<Model>) => m.atBackup !== null;
  async run(_m: Model, r: Real) {
    await r.run!.step(this.pages);
  }
  toString = () => `backupStep(${this.pages})`;
}

/** A step copies 1 to 8 pages; a new database has some 40, so a copy takes a few steps, with changes between them. */
const step = fc.integer({ min: 1, max: 8 }).map((p) => new BackupStep(p));
const write = fc.array(fc.integer({ min: 0, max: TENANTS.length - 1 }), { minLength: 1, maxLength: 4 }).map((t) => new Write(t));
const commands = [
  write,
  write,
  fc.nat().map((p) => new Delete(p)),
  fc.nat().map((p) => new Update(p)),
  fc.integer({ min: 1, max: 20 }).map((d) => new Merge(d)),
  fc.constant(new BeginBackup()),
  step,
  step,
  step,
];

/** Runs the model against `backup`: throws fast-check's report when a run fails. */
async function runBackupModel(backup: Backup, { seed, runs }: { seed: number; runs: number }, stats = { duringCopy: 0 }): Promise<void> {
  await fc.assert(
    fc.asyncProperty(fc.commands(commands, { maxCommands: 30, size: 'max' }), async (cmds) => {
      const dir = mkdtempSync(join(tmpdir(), 'memory-backup-model-'));
      const file = join(dir, 'memory.db');
      const real: Real = { sqlite: openSqliteAdapters(file, { merger: () => MANUAL }), stats, file, dir, backup, run: null };
      const model: Model = { live: [], words: 0, atBackup: null };
      try {
        await fc.asyncModelRun(() => ({ model, real }), cmds);
        if (real.run === null) await new BeginBackup().run(model, real);
        const summary = await real.run!.finish();
        await checkCopy(real.run!, model.atBackup!, summary);
      } finally {
        await real.run?.done.catch(() => undefined);
        real.sqlite.close();
        rmSync(dir, { recursive: true, force: true });
      }
    }),
    { seed, numRuns: runs },
  );
}

/** The copy holds what the model held when the backup began, and nothing else, searchable as it was. */
async function checkCopy(run: BackupRun, expected: Live[], summary: Pick<BackupSummary, 'records'>): Promise<void> {
  expect(run.copied).toEqual([...run.copied].sort((a, b) => a - b));
  expect(summary.records).toBe(expected.length);
  expect(existsSync(`${run.target}-wal`)).toBe(false);
  const db = new Database(run.target, { readonly: true, fileMustExist: true });
  try {
    expect(db.pragma('journal_mode', { simple: true })).toBe('delete');
    const rows = db.prepare('SELECT id, tenant_id, title, body FROM records ORDER BY id').all();
    const want = expected.map((x) => ({ id: x.id, tenant_id: TENANTS[x.tenant]!, title: x.title, body: x.body })).sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(rows).toEqual(want);
    expect(indexProblems(db)).toEqual([]);
    const search = new SqliteSearchIndex(db);
    for (const x of expected) {
      const word = /bkword\d+z/g;
      const words = `${x.title} ${x.body}`.match(word) ?? [];
      // The record's latest word finds it alone (an update's new word; else the one it was written with).
      const hits = await search.search(TENANTS[x.tenant]!, { text: parseQuery(words.at(-1)!), limit: 5 });
      expect(hits.map((h) => h.id)).toEqual([x.id]);
    }
  } finally {
    db.close();
  }
}

const SEED = process.env.MODEL_SEED === undefined ? 20261127 : Number(process.env.MODEL_SEED);

test('a backup is the database as it was when it began, records and index, whatever the writes, updates, deletes and merges between its steps', async () => {
  const stats = { duringCopy: 0 };
  await runBackupModel(backupDatabase, { seed: SEED, runs: Number(process.env.MODEL_RUNS ?? 60) }, stats);
  // The draw does what it is there for: many changes fell between two steps of a copy under way.
  expect(stats.duringCopy).toBeGreaterThan(50);
}, 600_000);

/**
 * The model's failure with `backup` in place of the shipped one, at a fixed seed: fast-check's report and
 * the failed expectation; 'the model passed' if none.
 */
async function failure(backup: Backup): Promise<string> {
  try {
    await runBackupModel(backup, { seed: 20261127, runs: 60 });
  } catch (error) {
    const cause = (error as Error).cause;
    return `${(error as Error).message}\n${cause instanceof Error ? cause.message : String(cause)}`;
  }
  return 'the model passed';
}

/** Switches a copy to a rollback journal, as the shipped backup does, so that a planted one differs in its copy only. */
function oneFile(target: string): number {
  const db = new Database(target);
  try {
    db.pragma('journal_mode = DELETE');
    return db.prepare('SELECT count(*) FROM records').pluck().get() as number;
  } finally {
    db.close();
  }
}

test("planted: SQLite's backup as better-sqlite3 gives it, without a read transaction held across its steps, is caught", async () => {
  // Each step reads the database as it is then, and a write by another connection starts the copy again.
  const unheld: Backup = async (source, target, { progress }) => {
    const db = new Database(source, { readonly: true, fileMustExist: true });
    try {
      const records = db.prepare('SELECT count(*) FROM records').pluck().get() as number;
      await db.backup(target, { progress: ({ totalPages, remainingPages }) => progress?.(totalPages - remainingPages, totalPages) ?? 100 });
      oneFile(target);
      return { records };
    } finally {
      db.close();
    }
  };
  expect(await failure(unheld)).toMatch(/Property failed after \d+ tests[\s\S]*Counterexample[\s\S]*expect\(received\)\.toEqual/);
}, 600_000);

test('planted: a copy of the database file and then of its write-ahead log, as `cp memory.db memory.db-wal` makes while the server writes, is caught', async () => {
  const twoFiles: Backup = async (source, target, { progress }) => {
    const reader = new Database(source, { readonly: true, fileMustExist: true });
    const records = reader.prepare('SELECT count(*) FROM records').pluck().get() as number;
    reader.close();
    copyFileSync(source, target);
    // The log a step later: what was written meanwhile is in it.
    while ((progress?.(0, 1) ?? 1) === 0) await new Promise((resolve) => setImmediate(resolve));
    copyFileSync(`${source}-wal`, `${target}-wal`);
    oneFile(target);
    return { records };
  };
  expect(await failure(twoFiles)).toMatch(/Property failed after \d+ tests[\s\S]*Counterexample[\s\S]*expect\(received\)\.toEqual/);
}, 600_000);
