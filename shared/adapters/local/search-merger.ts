import { Worker } from 'node:worker_threads';
import { BackgroundLoop, UNTIL_WOKEN } from './background-loop.js';
import type { Db } from './database.js';
import { SearchMerge } from './search-merge.js';
import { DEFAULT_MERGE_POLICY, MERGE_BACKOFF, MergeScheduler, type MergePolicy } from './search-merge-policy.js';
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

/**
 * Merges on the connection's own thread, between other work, for the processes that write little or have
 * no thread to spare: the tests and the AWS-shaped mode's index (the admin CLI leaves merging to the server:
 * local/backends.ts). Each merge is one batch in one step. Its loop starts at the first write, so opening a
 * database merges nothing by itself, and sleeps without a timer while nothing waits: the next write wakes it.
 */
export class InlineMerger implements SearchMerger {
  private readonly scheduler: MergeScheduler;
  private readonly loop: BackgroundLoop;

  constructor(db: Db, policy: MergePolicy = DEFAULT_MERGE_POLICY, onError: (error: unknown) => void = () => undefined) {
    this.scheduler = new MergeScheduler(new SearchMerge(db), policy, { idleMs: UNTIL_WOKEN });
    this.loop = new BackgroundLoop({
      name: 'search merge',
      pass: () => this.scheduler.look().nextMs,
      logger: { error: (_message, { error }) => onError(error) },
      backoff: MERGE_BACKOFF,
      // A process that ends without closing its adapters (a script, a test) is not held up by a merge nobody needs.
      unref: true,
    });
  }

  wake(): void {
    this.loop.start();
    this.loop.wake();
  }

  /** Merges every record waiting, now. */
  mergeAll(): void {
    this.scheduler.mergeAll();
  }

  close(): Promise<void> {
    return this.loop.stop();
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
