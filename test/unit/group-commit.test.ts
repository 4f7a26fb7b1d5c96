import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { openDatabase, type Db } from '../../shared/adapters/local/database.js';
import { GroupCommit } from '../../shared/adapters/local/group-commit.js';
import { SqliteJobQueue } from '../../shared/adapters/local/job-queue.js';
import { SqliteRecordStore } from '../../shared/adapters/local/record-store.js';
import { newRecord } from '../../shared/domain/record.js';

let dir: string;
let db: Db;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memory-group-commit-'));
  db = openDatabase(join(dir, 'memory.db'));
  db.exec('CREATE TABLE t (n INTEGER PRIMARY KEY)');
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Counts the IMMEDIATE transactions started through `db.transaction(…).immediate`: the group commits. */
function countCommits(database: Db): () => number {
  let commits = 0;
  const original = database.transaction.bind(database);
  database.transaction = ((fn: (...args: never[]) => unknown) => {
    const tx = original(fn);
    return Object.assign((...args: never[]) => tx(...args), {
      default: tx.default,
      deferred: tx.deferred,
      exclusive: tx.exclusive,
      immediate: (...args: never[]) => (commits++, tx.immediate(...args)),
    });
  }) as Db['transaction'];
  return () => commits;
}

describe('group commit', () => {
  test('a batch that finds the database locked waits for the lock without blocking, and then commits', async () => {
    // A minute of SQLite's own wait: a batch that waited in SQLite's busy handler would hold this thread (and
    // the timer below) past the test's timeout. Another connection holds the lock for a while.
    db.pragma('busy_timeout = 60000');
    const other = new Database(db.name);
    other.exec('BEGIN IMMEDIATE');
    const group = new GroupCommit(db);
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    const writes = [1, 2, 3].map((n) => group.submit(() => insert.run(n)));
    // The event loop goes on meanwhile: this timer runs while the batch waits.
    let ticked = false;
    await new Promise((resolve) => setTimeout(resolve, 30)).then(() => (ticked = true));
    other.exec('COMMIT');
    other.close();
    await Promise.all(writes);
    expect(ticked).toBe(true);
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(3);
    // The connection's own wait is back for its other statements.
    expect(db.pragma('busy_timeout', { simple: true })).toBe(60000);
  }, 20_000);

  test('writes submitted together commit in one transaction, and each caller gets its own result', async () => {
    const commits = countCommits(db);
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    const group = new GroupCommit(db);
    const results = await Promise.all(Array.from({ length: 50 }, (_, n) => group.submit(() => insert.run(n).changes * 1000 + n)));
    expect(results).toEqual(Array.from({ length: 50 }, (_, n) => 1000 + n));
    expect(commits()).toBe(1);
    expect(db.prepare('SELECT count(*) AS c FROM t').get()).toEqual({ c: 50 });
  });

  test('a write that throws is rolled back alone; the others of its batch commit', async () => {
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    const group = new GroupCommit(db);
    const outcomes = await Promise.allSettled([
      group.submit(() => insert.run(1)),
      group.submit(() => {
        insert.run(2);
        throw new Error('quota used up');
      }),
      group.submit(() => insert.run(3)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toEqual(new Error('quota used up'));
    expect(db.prepare('SELECT n FROM t ORDER BY n').all()).toEqual([{ n: 1 }, { n: 3 }]);
  });

  test('a batch holds at most maxBatch writes; the rest commit in the next transactions', async () => {
    const commits = countCommits(db);
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    const group = new GroupCommit(db, 10);
    await Promise.all(Array.from({ length: 25 }, (_, n) => group.submit(() => insert.run(n))));
    expect(commits()).toBe(3);
  });

  test('a promise settles only after the commit: nothing is reported before it is durable', async () => {
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    const group = new GroupCommit(db);
    const other = openDatabase(join(dir, 'memory.db')); // a second connection sees only committed rows
    try {
      await group.submit(() => insert.run(7));
      expect(other.prepare('SELECT n FROM t').all()).toEqual([{ n: 7 }]);
    } finally {
      other.close();
    }
  });

  test('when the commit itself fails, every write of the batch fails with its error', async () => {
    const group = new GroupCommit(db);
    const blocker = openDatabase(join(dir, 'memory.db'));
    blocker.pragma('busy_timeout = 0');
    db.pragma('busy_timeout = 0');
    blocker.prepare('BEGIN IMMEDIATE').run(); // holds the write lock, so our IMMEDIATE transaction cannot start
    try {
      const outcomes = await Promise.allSettled([group.submit(() => 1), group.submit(() => 2)]);
      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
      expect(String((outcomes[0] as PromiseRejectedResult).reason)).toMatch(/locked|busy/i);
    } finally {
      blocker.prepare('ROLLBACK').run();
      blocker.close();
    }
  });

  test('the adapters on one connection share its group commit: a write, a claim and an acknowledgement commit once', async () => {
    const commits = countCommits(db);
    const records = new SqliteRecordStore(db);
    const jobs = new SqliteJobQueue(db);
    await jobs.enqueue([{ tenant_id: 't', record_id: 'earlier' }]);
    const [earlier] = await jobs.claim(1, 60_000);
    const before = commits();
    const record = newRecord('t', { agent_id: 'a', type: 'fact', title: 'Shared fsync', body: 'One commit.', client: null, metadata: null }, new Date());
    const [receipt, claimed] = await Promise.all([
      records.create('t', record, { recordQuota: 10, month: '2026-11' }),
      jobs.claim(5, 60_000),
      jobs.complete([earlier!.jobId]),
    ]);
    expect(commits() - before).toBe(1);
    expect(receipt.receipt.id).toBe(record.id);
    // The claim ran after the write in the same transaction, so it leased the write's own job.
    expect(claimed.map((j) => j.record_id)).toEqual([record.id]);
    expect(jobs.backlog()).toBe(1);
  });
});

