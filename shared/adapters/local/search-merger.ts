import { Worker } from 'node:worker_threads';
import type { Db } from './database.js';
import { SearchMerge } from './search-merge.js';
import type { MergeThreadData, MergeThreadEvent } from './search-merge-thread.js';
import { threadEntry } from './thread-entry.js';

/**
 * Who runs the merges (search-merge.ts) of a database, and when. A write calls `wake` once it has committed;
 * nothing is ever wrong for want of a merge (a search reads the tail), only slower, so a merger decides
 * when a merge is worth its cost.
 */
export interface SearchMerger {
  /** A write has committed: records may wait above the merge mark. */
  wake(): void;
  /** Stops merging; a merge cut short is consistent and resumes at the next open. */
  close(): Promise<void>;
}

/** When to merge: once this many records wait, or once the first of them has waited this long. */
export interface MergePolicy {
  minDocs: number;
  maxDelayMs: number;
  /** The most records one merge takes in. */
  maxDocs: number;
}

/**
 * A merge of 4 096 records costs about 130 µs a record here, one of 1 024 about 180 µs (the per-word work
 * is shared by more records), so the merge waits for a few thousand, or a second (docs/architecture.md).
 */
export const DEFAULT_MERGE_POLICY: MergePolicy = { minDocs: 4096, maxDelayMs: 1000, maxDocs: 16384 };

/**
 * Merges on the connection's own thread, between other work (setImmediate), for the processes that write
 * little or have no thread to spare: the tests and the AWS-shaped mode's index (the admin CLI leaves merging
 * to the server: local/backends.ts). Each merge is one batch in one step.
 */
export class InlineMerger implements SearchMerger {
  private readonly merge: SearchMerge;
  private immediate: NodeJS.Immediate | null = null;
  private timer: NodeJS.Timeout | null = null;
  private waitingSince: number | null = null;
  private closed = false;

  constructor(
    db: Db,
    private readonly policy: MergePolicy = DEFAULT_MERGE_POLICY,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {
    this.merge = new SearchMerge(db);
  }

  wake(): void {
    if (this.closed || this.immediate || this.timer) return;
    this.immediate = setImmediate(() => this.pass());
  }

  /** Merges every record waiting, now. */
  mergeAll(): void {
    while (this.merge.next(this.policy.maxDocs) > 0);
    this.waitingSince = null;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.immediate) clearImmediate(this.immediate);
    if (this.timer) clearTimeout(this.timer);
    this.immediate = this.timer = null;
  }

  private pass(): void {
    this.immediate = this.timer = null;
    if (this.closed) return;
    try {
      const pending = this.merge.pending();
      if (pending === 0) {
        this.waitingSince = null;
        return;
      }
      this.waitingSince ??= Date.now();
      const waited = Date.now() - this.waitingSince;
      if (pending < this.policy.minDocs && waited < this.policy.maxDelayMs) {
        this.timer = setTimeout(() => this.pass(), this.policy.maxDelayMs - waited);
        this.timer.unref();
        return;
      }
      this.merge.next(this.policy.maxDocs);
      this.waitingSince = null;
      this.wake();
    } catch (error) {
      this.onError(error);
    }
  }
}

/**
 * Merges on a thread of its own with a connection of its own, for the server: a merge's work (reading the
 * records, analyzing them, writing the postings) then costs the server's thread nothing, and each of its
 * steps holds the write lock for a few milliseconds only (`stepMs`), so the server's writes wait that long
 * at most. The thread merges whenever records wait, by the policy, and looks again every `maxDelayMs`, so
 * records another process wrote are merged too.
 */
export class ThreadMerger implements SearchMerger {
  private worker: Worker | null = null;
  private wakeQueued = false;
  private closing: Promise<void> | null = null;
  private readonly stop = new Int32Array(new SharedArrayBuffer(4));

  constructor(
    private readonly file: string,
    private readonly onEvent: (event: MergeThreadEvent) => void = () => undefined,
    private readonly policy: MergePolicy = DEFAULT_MERGE_POLICY,
    private readonly stepMs = 4,
    private readonly entry: URL = threadEntry(import.meta.url, 'search-merge-thread'),
  ) {}

  wake(): void {
    if (this.closing || this.wakeQueued) return;
    this.wakeQueued = true;
    // Once per turn of the event loop, however many writes committed in it.
    setImmediate(() => {
      this.wakeQueued = false;
      if (this.closing) return;
      this.thread().postMessage('wake');
    });
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      const worker = this.worker;
      if (!worker) return;
      Atomics.store(this.stop, 0, 1);
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage('stop');
      await exited;
    })();
    return this.closing;
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const data: MergeThreadData = { file: this.file, policy: this.policy, stepMs: this.stepMs, stop: this.stop };
    const worker = new Worker(this.entry, { workerData: data });
    worker.on('message', (event: MergeThreadEvent) => this.onEvent(event));
    worker.on('error', (error) => this.onEvent({ kind: 'failed', error: error instanceof Error ? error.message : String(error) }));
    // A thread that died is started again at the next write; until then the tail grows, and searches read it.
    worker.on('exit', () => {
      if (this.worker === worker) this.worker = null;
    });
    this.worker = worker;
    return worker;
  }
}
