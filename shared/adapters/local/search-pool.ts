import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { types } from 'node:util';
import { Worker } from 'node:worker_threads';
import type { SearchHit } from '../../domain/record.js';
import type { SearchIndex, SearchQuery } from '../../ports.js';
import type { SearchReply, SearchRequest } from './search-worker.js';

/**
 * The worker's entry. From compiled JavaScript, the worker module itself; from TypeScript source (tsx, or
 * Jest), a small ES module that first registers tsx's loader in the new thread, because Node 20 does not
 * pass a loader given with `--import` on to worker threads (nodejs/node#47747, privatenumber/tsx#354).
 */
function workerEntry(): URL {
  const ext = extname(fileURLToPath(import.meta.url));
  const worker = new URL(`./search-worker${ext}`, import.meta.url);
  if (ext !== '.ts') return worker;
  const source = `import { register } from ${JSON.stringify(import.meta.resolve('tsx/esm/api'))};
register();
await import(${JSON.stringify(worker.href)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(source)}`);
}

/** The message of what a thread threw: an Error from another realm (as under Jest) is no `instanceof Error`. */
function reasonOf(error: unknown): string {
  if (types.isNativeError(error)) return error.message;
  return typeof error === 'object' && error !== null && 'message' in error ? String(error.message) : JSON.stringify(error);
}

interface Pending {
  resolve(hits: SearchHit[]): void;
  reject(error: Error): void;
}

interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
}

/**
 * The SQLite search on worker threads, each with its own read-only connection to the database file, so
 * that searches use every core instead of queueing on the server's one thread behind each other and behind
 * the writes. A search goes to the thread with the fewest in flight. The engine (SqliteSearchIndex) is the
 * same one; only where it runs changes.
 *
 * A thread that dies fails its searches in flight (the query handler answers them as internal errors) and
 * is started again when the next search comes, not at once, so that a thread that cannot start (say, the
 * database file is gone) costs one failed search each time rather than a loop of restarts.
 */
export class SqliteSearchPool implements SearchIndex {
  /** The threads by slot; null where one died and has not been started again yet. */
  private readonly threads: (Thread | null)[];
  private nextId = 0;
  private closed = false;

  constructor(
    private readonly file: string,
    size: number,
  ) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`a search pool needs at least one thread, not ${size}`);
    this.threads = Array.from({ length: size }, () => this.spawn());
  }

  private spawn(): Thread {
    const worker = new Worker(workerEntry(), { workerData: { file: this.file } });
    const thread: Thread = { worker, pending: new Map() };
    worker.on('message', (reply: SearchReply) => {
      const call = thread.pending.get(reply.id);
      if (!call) return;
      thread.pending.delete(reply.id);
      if ('error' in reply) call.reject(new Error(reply.error));
      else call.resolve(reply.hits);
    });
    // 'error' (an exception the thread did not catch) is followed by 'exit'; whichever comes first fails
    // the searches in flight with the better reason.
    const fail = (error: Error) => {
      for (const call of thread.pending.values()) call.reject(error);
      thread.pending.clear();
      const slot = this.threads.indexOf(thread);
      if (slot >= 0) this.threads[slot] = null;
    };
    worker.on('error', (error: unknown) => fail(new Error(`a search thread failed: ${reasonOf(error)}`)));
    worker.on('exit', (code) => fail(new Error(`a search thread exited with code ${code}`)));
    return thread;
  }

  search(tenantId: string, query: SearchQuery): Promise<SearchHit[]> {
    if (this.closed) return Promise.reject(new Error('the search pool is closed'));
    // The thread with the fewest searches in flight; a dead one is started again and, being idle, chosen.
    let thread: Thread | undefined;
    for (let slot = 0; slot < this.threads.length; slot++) {
      const t = (this.threads[slot] ??= this.spawn());
      if (!thread || t.pending.size < thread.pending.size) thread = t;
    }
    const id = this.nextId++;
    return new Promise<SearchHit[]>((resolve, reject) => {
      thread!.pending.set(id, { resolve, reject });
      thread!.worker.postMessage({ id, tenantId, query } satisfies SearchRequest);
    });
  }

  /** Stops the threads; searches still in flight fail. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.threads.map((t) => t?.worker.terminate()));
  }
}
