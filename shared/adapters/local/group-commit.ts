import type { Db } from './database.js';

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

interface Pending {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** When its batch first found the database locked; undefined until then. */
  busySince?: number;
}

/** How long a batch that finds the database locked keeps trying (the connections' busy_timeout), and how often. */
const BUSY_DEADLINE_MS = 5000;
const BUSY_RETRY_MS = 2;

/**
 * Group commit: the writes submitted while the event loop is busy run together in one IMMEDIATE
 * transaction, so one fsync makes a whole batch durable instead of one fsync per write. Each write runs
 * in its own savepoint (a better-sqlite3 transaction function nested in another uses one), so a write that
 * throws (a used-up quota, a reused idempotency key) is rolled back alone and only its caller sees the
 * error. Every caller's promise settles after the batch has committed: a write is never reported before
 * it is durable. If the commit itself fails, every write of the batch fails with that error.
 *
 * A batch that finds the database locked (SQLITE_BUSY: nothing of it was applied) is tried again a little
 * later, without blocking the event loop, until BUSY_DEADLINE_MS have passed. Its BEGIN does not wait in
 * SQLite's busy handler (the connection's busy_timeout is 0 for it): that handler sleeps 1, 2, 5 ms and more
 * on the thread that answers requests, while the merge and classification threads take the lock for short
 * steps all the time.
 */
export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  private readonly inSavepoint;
  private readonly commitBatch;
  /**
   * The connection's busy_timeout, which a batch sets to 0 for its BEGIN and back after. With db.pragma each
   * time: SQLite applies this pragma when it prepares the statement, so a prepared one run again does nothing.
   */
  private readonly busyTimeout: number;

  /** @param maxBatch the most writes one transaction holds; more wait for the next one. */
  constructor(
    private readonly db: Db,
    private readonly maxBatch = 256,
  ) {
    this.busyTimeout = db.pragma('busy_timeout', { simple: true }) as number;
    this.inSavepoint = db.transaction((work: () => unknown) => work());
    this.commitBatch = db.transaction((batch: Pending[]) =>
      batch.map(({ work }): Outcome => {
        try {
          return { ok: true, value: this.inSavepoint(work) };
        } catch (error) {
          return { ok: false, error };
        }
      }),
    );
  }

  /** A batch waits for the lock: no flush runs until the retry. */
  private retrying = false;

  private retryLater(): void {
    this.retrying = true;
    setTimeout(() => {
      this.retrying = false;
      this.flush();
    }, BUSY_RETRY_MS);
  }

  /** Runs `work` (synchronous SQLite statements) in the next batch; resolves with its result once committed. */
  submit<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // After the I/O callbacks of this turn, so that the requests that arrived together commit together.
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    if (this.retrying) return;
    const batch = this.queue.splice(0, this.maxBatch);
    this.scheduled = this.queue.length > 0;
    if (this.scheduled) setImmediate(() => this.flush());

    let outcomes: Outcome[];
    try {
      this.db.pragma('busy_timeout = 0');
      try {
        outcomes = this.commitBatch.immediate(batch);
      } finally {
        this.db.pragma(`busy_timeout = ${this.busyTimeout}`);
      }
    } catch (error) {
      const now = Date.now();
      if (isBusy(error) && now - (batch[0]!.busySince ??= now) < BUSY_DEADLINE_MS) {
        this.queue.unshift(...batch);
        this.retryLater();
        return;
      }
      for (const { reject } of batch) reject(error);
      return;
    }
    batch.forEach(({ resolve, reject }, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) resolve(outcome.value);
      else reject(outcome.error);
    });
  }
}

function isBusy(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'SQLITE_BUSY';
}

const perConnection = new WeakMap<Db, GroupCommit>();

/**
 * The one group commit of a connection, shared by the adapters that write on it often: records, their
 * classifications, and the job queue's claims and acknowledgements share fsyncs, instead of each adapter
 * committing (and waiting for the disk) on its own, on the server's thread. The rarer writes (keys, a job's
 * retry) still commit on their own, and the query counter on a connection of its own without waiting for
 * the disk (usage-meter.ts).
 */
export function groupCommitOf(db: Db): GroupCommit {
  let group = perConnection.get(db);
  if (!group) perConnection.set(db, (group = new GroupCommit(db)));
  return group;
}
