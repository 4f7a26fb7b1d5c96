import { parentPort, workerData } from 'node:worker_threads';
import { BackgroundLoop, UNTIL_WOKEN } from './background-loop.js';
import { openRelaxedDatabase } from './database.js';
import { SearchMerge } from './search-merge.js';
import { MERGE_BACKOFF, MergeScheduler, type MergePolicy } from './search-merge-policy.js';

/** What the thread is started with (search-merger.ts, ThreadMerger). */
export interface MergeThreadData {
  file: string;
  policy: MergePolicy;
  stepMs: number;
  /** Set to 1 by the server when it stops: the thread ends after the step it is in. */
  stop: Int32Array;
}

/** What the thread reports: each merge, and each failure (the thread goes on). */
export type MergeThreadEvent = { kind: 'merged'; docs: number; ms: number; pending: number } | { kind: 'failed'; error: string };

if (!parentPort) throw new Error('search-merge-thread.ts runs as a worker thread of ThreadMerger');
const port = parentPort;
const { file, policy, stepMs, stop } = workerData as MergeThreadData;

// A connection of its own. Its commits need not wait for the disk (synchronous = NORMAL): the index is made
// from the records, which commit with an fsync on the server's connection, and WAL recovery keeps a prefix of
// the commits, so a power cut can only undo the last merges, which the next one redoes.
const db = openRelaxedDatabase(file);

const stopped = () => Atomics.load(stop, 0) === 1;
// With nothing waiting it looks again every maxDelayMs, so that records another process wrote are merged too.
const scheduler = new MergeScheduler(new SearchMerge(db), policy, { idleMs: policy.maxDelayMs, stepMs, stopped });

const loop = new BackgroundLoop({
  name: 'search merge',
  // The thread has no logger of its own: the server logs what it posts (local/backends.ts).
  logger: { error: (_message, { error }) => port.postMessage({ kind: 'failed', error: error instanceof Error ? error.message : String(error) } satisfies MergeThreadEvent) },
  backoff: MERGE_BACKOFF,
  pass: () => {
    // The server sets the flag just before it posts 'stop': start nothing more in between.
    if (stopped()) return UNTIL_WOKEN;
    const started = performance.now();
    const { nextMs, merged } = scheduler.look();
    if (merged) {
      // The log's pages go back into the database file here, off the server's thread (database.ts).
      db.pragma('wal_checkpoint(PASSIVE)');
      port.postMessage({ kind: 'merged', docs: merged.docs, ms: performance.now() - started, pending: merged.pending - merged.docs } satisfies MergeThreadEvent);
    }
    return nextMs;
  },
});

port.on('message', (message: 'wake' | 'stop') => {
  // A wake looks at once; a look that finds too few records waiting, too recently, sleeps the rest of the wait.
  if (message === 'wake') return loop.wake();
  void loop.stop().then(() => {
    db.close();
    port.close();
  });
});
loop.start();
