import { types } from 'node:util';
import { Worker } from 'node:worker_threads';
import { AppError } from '../../domain/errors.js';
import type { SearchHit } from '../../domain/record.js';
import type { SearchIndex, SearchQuery } from '../../ports.js';
import { toSearchHit } from './rows.js';
import type { SearchReply, SearchRequest, SearchWorkerData } from './search-worker.js';
import { threadEntry } from './thread-entry.js';

/** The message of what a thread threw: an Error from another realm (as under Jest) is no `instanceof Error`. */
function reasonOf(error: unknown): string {
  if (types.isNativeError(error)) return error.message;
  return typeof error === 'object' && error !== null && 'message' in error ? String(error.message) : JSON.stringify(error);
}

export interface SearchPoolOptions {
  /** Worker threads, each with its own read-only connection. */
  threads: number;
  /** How long a search may take, its wait for a thread included, before it fails with 503 `search_timeout`. */
  timeoutMs: number;
  /** Searches that may wait for a free thread; one more fails at once with 503 `overloaded`. */
  maxWaiting: number;
  /**
   * Searches of one tenant that may run on the threads at once: all the threads but one unless given (at
   * least one), so that one tenant's searches, however costly, always leave a thread to the others.
   */
  maxRunningPerTenant?: number;
  /** Searches of one tenant that may wait: half the queue unless given (at least one), so that one tenant cannot fill it. */
  maxWaitingPerTenant?: number;
  /** What each thread's connection keeps of the index's blocks between searches (BLOCK_CACHE_BYTES unless given). */
  blockCacheBytes?: number;
  /** The threads' module: the SQLite search worker unless given (the tests give one that stalls on demand). */
  entry?: URL;
  /**
   * How to run a search on the caller's thread instead: always when its work is below the hop's cost
   * (INLINE_MAX_POSTINGS), and when no other search is running or waiting, for moderate work
   * (IDLE_INLINE_MAX_POSTINGS). None unless given.
   */
  inline?: InlineSearches;
}

/** The searches a pool answers on the caller's thread, with the engine on a connection of that thread. */
export interface InlineSearches {
  /**
   * The search's hits, found on the caller's thread (on the server's own connection, which sees every write
   * at once), when an upper bound on its work (the postings it may read, the records whose filters it may
   * ask: SqliteSearchIndex `workOf`, whatever the tenant's size) is at most `most`; undefined when it may
   * cost more, and the threads run it.
   */
  searchWithin(tenantId: string, query: SearchQuery, most: number): SearchHit[] | undefined;
}

/** Work below the cost of the hop to a thread: always run on the server's thread (two blocks of 128). */
export const INLINE_MAX_POSTINGS = 256;

/**
 * Work run on the server's thread when no other search is running or waiting: the threads are there to
 * search in parallel, and with nothing to run beside, the hop (a message each way, two wake-ups, a copy of
 * the rows: about half a millisecond here) would be all they add. A few milliseconds of work at most: a
 * bound on the postings read, of which block-max pruning reads far fewer (the commonest words of a
 * 50 000-record tenant, bounded by some 32 000 to 43 000, take about 1 ms). Raised from 16 384, which sent
 * those to a thread: bench/overhead.ts --records 100000 at concurrency 1, several words 1.19 -> 1.06 ms,
 * phrases 1.16 -> 1.03, the commonest words 1.90 -> 1.65 over HTTP.
 */
export const IDLE_INLINE_MAX_POSTINGS = 65_536;

/** One search, from its arrival until it is answered. */
interface Task {
  request: SearchRequest;
  resolve(hits: SearchHit[]): void;
  reject(error: Error): void;
  /** Fires at the search's deadline. */
  deadline: NodeJS.Timeout;
  done: boolean;
}

interface Thread {
  worker: Worker;
  /** The one search this thread is running, if any. */
  task: Task | null;
  /** Set once a running search is past its deadline: stops the thread if it still has not answered. */
  watchdog: NodeJS.Timeout | null;
}

/**
 * The SQLite search on worker threads, each with its own read-only connection to the database file, so
 * that searches use every core instead of queueing on the server's one thread behind each other and behind
 * the writes. The engine (SqliteSearchIndex) is the same one; only where it runs changes. With `inline`,
 * the searches whose work is bounded below the cost of the hop run on the caller's thread instead
 * (SqliteSearchIndex `workOf`); what follows is about the others.
 *
 * Every search is answered or fails within `timeoutMs`, and what waits is bounded:
 * - A thread runs one search at a time, so the pool always knows which search a reply (or a reply that
 *   cannot be read) belongs to. Searches beyond the free threads wait in a queue of at most `maxWaiting`;
 *   past that, a search fails at once with 503 `overloaded`, so load cannot grow memory without limit.
 * - No tenant holds every thread, nor fills the queue: a tenant's searches run on at most all the threads
 *   but one (`maxRunningPerTenant`), the others wait, and the threads go to the oldest search whose tenant
 *   is below its share; a tenant may have half the queue (`maxWaitingPerTenant`), and its next search fails
 *   at once with 503 `overloaded`. So one tenant's costly searches leave a thread to everyone else's.
 * - At its deadline a search fails with 503 `search_timeout`, whether it is still waiting (it leaves the
 *   queue) or running. A thread whose search is past its deadline is given as long again to answer, then
 *   stopped and replaced, so a thread that never answers cannot hold its slot for good.
 * - Replies are flat rows (search-worker.ts); a reply that cannot be sent or read fails its own search
 *   with the reason, and the thread goes on with the next.
 * - A thread that dies fails its search and is started again when a search needs it, not at once, so a
 *   thread that cannot start (say, the database file is gone) costs one failed search each time rather
 *   than a loop of restarts.
 */
export class SqliteSearchPool implements SearchIndex {
  /** The threads by slot; null where one died and has not been started again yet. */
  private readonly threads: (Thread | null)[];
  private readonly waiting: Task[] = [];
  /** Per tenant, its searches on the threads and its searches waiting. */
  private readonly running = new Map<string, number>();
  private readonly waitingOf = new Map<string, number>();
  private readonly maxRunningPerTenant: number;
  private readonly maxWaitingPerTenant: number;
  private nextId = 0;
  private closed = false;

  constructor(
    private readonly file: string,
    private readonly options: SearchPoolOptions,
  ) {
    const { threads, timeoutMs, maxWaiting } = options;
    if (!Number.isInteger(threads) || threads < 1) throw new Error(`a search pool needs at least one thread, not ${threads}`);
    if (!(timeoutMs > 0) || !Number.isInteger(maxWaiting) || maxWaiting < 0) throw new Error('a search pool needs a positive timeout and a queue of 0 or more');
    this.maxRunningPerTenant = options.maxRunningPerTenant ?? Math.max(1, threads - 1);
    this.maxWaitingPerTenant = options.maxWaitingPerTenant ?? Math.max(1, Math.ceil(maxWaiting / 2));
    this.threads = Array.from({ length: threads }, () => this.spawn());
  }

  search(tenantId: string, query: SearchQuery): Promise<SearchHit[]> {
    if (this.closed) return Promise.reject(new Error('the search pool is closed'));
    const inline = this.options.inline && this.inline(this.options.inline, tenantId, query);
    if (inline) return Promise.resolve(inline);
    return new Promise<SearchHit[]>((resolve, reject) => {
      const task: Task = {
        request: { id: this.nextId++, tenantId, query },
        resolve,
        reject,
        deadline: setTimeout(() => this.expire(task), this.options.timeoutMs),
        done: false,
      };
      const thread = this.mayRun(tenantId) ? this.idleThread() : undefined;
      if (thread) this.run(thread, task);
      else if (this.waiting.length >= this.options.maxWaiting) {
        this.settle(task, new AppError('overloaded', `Too many searches are waiting (${this.options.maxWaiting}); try again in a moment`, 1));
      } else if (count(this.waitingOf, tenantId) >= this.maxWaitingPerTenant) {
        this.settle(task, new AppError('overloaded', `Too many searches of this tenant are waiting (${this.maxWaitingPerTenant}); try again in a moment`, 1));
      } else {
        this.waiting.push(task);
        add(this.waitingOf, tenantId, 1);
      }
    });
  }

  /**
   * The hits of a search whose work allows it to run on the caller's thread: below the hop's cost always,
   * moderate work when no other search is running or waiting. Undefined otherwise, and when it fails there
   * (its work could not be told, say): the threads run it then, on their own connections.
   */
  private inline(inline: InlineSearches, tenantId: string, query: SearchQuery): SearchHit[] | undefined {
    const idle = this.waiting.length === 0 && this.threads.every((thread) => !thread?.task);
    try {
      return inline.searchWithin(tenantId, query, idle ? IDLE_INLINE_MAX_POSTINGS : INLINE_MAX_POSTINGS);
    } catch {
      return undefined;
    }
  }

  /** Stops the threads; searches waiting or in flight fail. */
  async close(): Promise<void> {
    this.closed = true;
    const closing = new Error('the search pool is closed');
    for (const task of this.waiting.splice(0)) this.settle(task, closing);
    this.waitingOf.clear();
    await Promise.all(
      this.threads.map((thread) => {
        if (!thread) return undefined;
        if (thread.task) this.settle(thread.task, closing);
        return thread.worker.terminate();
      }),
    );
  }

  private spawn(): Thread {
    const worker = new Worker(this.options.entry ?? threadEntry(import.meta.url, 'search-worker'), { workerData: { file: this.file, blockCacheBytes: this.options.blockCacheBytes } satisfies SearchWorkerData });
    const thread: Thread = { worker, task: null, watchdog: null };
    worker.on('message', (reply: SearchReply) => {
      const task = thread.task;
      if (!task || task.request.id !== reply.id) return;
      if ('error' in reply) this.finish(thread, new Error(reply.error));
      else this.finish(thread, () => reply.rows.map(toSearchHit));
    });
    // A reply that cannot be deserialized here: it can only be the answer to the search the thread runs.
    worker.on('messageerror', (error: unknown) => this.finish(thread, new Error(`a search thread's answer could not be read: ${reasonOf(error)}`)));
    // 'error' (an exception the thread did not catch) is followed by 'exit'; whichever comes first fails
    // the search in flight with the better reason.
    worker.on('error', (error: unknown) => this.retire(thread, new Error(`a search thread failed: ${reasonOf(error)}`)));
    worker.on('exit', (code) => this.retire(thread, new Error(`a search thread exited with code ${code}`)));
    return thread;
  }

  /** A thread with nothing to do, starting one in an empty slot if need be; undefined when all are busy. */
  private idleThread(): Thread | undefined {
    for (const thread of this.threads) if (thread && !thread.task) return thread;
    const slot = this.threads.indexOf(null);
    if (slot < 0) return undefined;
    return (this.threads[slot] = this.spawn());
  }

  /** Whether the tenant may have one more search on the threads. */
  private mayRun(tenantId: string): boolean {
    return count(this.running, tenantId) < this.maxRunningPerTenant;
  }

  private run(thread: Thread, task: Task): void {
    thread.task = task;
    add(this.running, task.request.tenantId, 1);
    try {
      thread.worker.postMessage(task.request);
    } catch (error) {
      this.finish(thread, new Error(`the search could not be sent to its thread: ${reasonOf(error)}`));
    }
  }

  /** Answers the thread's search (with hits, or an error) and gives the thread the next waiting search. */
  private finish(thread: Thread, outcome: Error | (() => SearchHit[])): void {
    const task = thread.task;
    thread.task = null;
    if (task) add(this.running, task.request.tenantId, -1);
    if (thread.watchdog) clearTimeout(thread.watchdog);
    thread.watchdog = null;
    if (task) {
      let result: Error | SearchHit[];
      try {
        result = outcome instanceof Error ? outcome : outcome();
      } catch (error) {
        result = new Error(`a search result could not be read: ${reasonOf(error)}`);
      }
      this.settle(task, result);
    }
    this.dispatch();
  }

  /** Takes a dead or stopped thread out of its slot and fails its search; a later search starts a new one. */
  private retire(thread: Thread, reason: Error): void {
    const slot = this.threads.indexOf(thread);
    if (slot >= 0) this.threads[slot] = null;
    this.finish(thread, reason);
  }

  /** Hands waiting searches to idle threads, oldest first, passing over those whose tenant has its share of the threads. */
  private dispatch(): void {
    for (let i = 0; !this.closed && i < this.waiting.length; ) {
      const task = this.waiting[i]!;
      if (!this.mayRun(task.request.tenantId)) {
        i++;
        continue;
      }
      const thread = this.idleThread();
      if (!thread) return;
      this.unqueue(i);
      this.run(thread, task);
    }
  }

  private unqueue(i: number): void {
    const [task] = this.waiting.splice(i, 1);
    add(this.waitingOf, task!.request.tenantId, -1);
  }

  private expire(task: Task): void {
    if (task.done) return;
    const seconds = Math.round(this.options.timeoutMs / 100) / 10;
    this.settle(task, new AppError('search_timeout', `The search did not finish within ${seconds} s; try again in a moment`, 1));
    const queued = this.waiting.indexOf(task);
    if (queued >= 0) {
      this.unqueue(queued);
      return;
    }
    const thread = this.threads.find((t) => t?.task === task);
    if (thread && !thread.watchdog) {
      thread.watchdog = setTimeout(() => {
        if (thread.task !== task) return;
        this.retire(thread, new Error('a search thread did not answer and was stopped'));
        void thread.worker.terminate();
      }, this.options.timeoutMs);
    }
  }

  private settle(task: Task, result: Error | SearchHit[]): void {
    if (task.done) return;
    task.done = true;
    clearTimeout(task.deadline);
    if (result instanceof Error) task.reject(result);
    else task.resolve(result);
  }
}

const count = (counts: Map<string, number>, key: string) => counts.get(key) ?? 0;

/** Adds `by` to a count, dropping it at 0 so that the map holds only the tenants with searches. */
function add(counts: Map<string, number>, key: string, by: number): void {
  const next = count(counts, key) + by;
  if (next === 0) counts.delete(key);
  else counts.set(key, next);
}
