import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { SearchMerge } from './search-merge.js';
import type { MergePolicy } from './search-merger.js';

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
const db = new Database(file, { fileMustExist: true });
db.pragma('busy_timeout = 5000');
db.pragma('synchronous = NORMAL');
const merge = new SearchMerge(db);

let timer: NodeJS.Timeout | null = null;
let waitingSince: number | null = null;
/** Failures in a row: the next look waits longer, up to a minute. */
let failures = 0;

const stopped = () => Atomics.load(stop, 0) === 1;

function schedule(ms: number): void {
  if (timer) clearTimeout(timer);
  timer = setTimeout(pass, ms);
}

/** One look: merges a batch if the policy says so, then schedules the next look. */
function pass(): void {
  timer = null;
  if (stopped()) return finish();
  try {
    const pending = merge.pending();
    if (pending === 0) {
      waitingSince = null;
      failures = 0;
      return schedule(policy.maxDelayMs);
    }
    waitingSince ??= Date.now();
    const waited = Date.now() - waitingSince;
    if (pending < policy.minDocs && waited < policy.maxDelayMs) return schedule(policy.maxDelayMs - waited);
    const started = performance.now();
    const docs = merge.next(policy.maxDocs, stepMs, stopped);
    // The log's pages go back into the database file here, off the server's thread (database.ts).
    db.pragma('wal_checkpoint(PASSIVE)');
    waitingSince = null;
    failures = 0;
    port.postMessage({ kind: 'merged', docs, ms: performance.now() - started, pending: pending - docs } satisfies MergeThreadEvent);
    schedule(0);
  } catch (error) {
    failures++;
    port.postMessage({ kind: 'failed', error: error instanceof Error ? error.message : String(error) } satisfies MergeThreadEvent);
    schedule(Math.min(60_000, 100 * 2 ** failures));
  }
}

function finish(): void {
  if (timer) clearTimeout(timer);
  db.close();
  port.close();
}

port.on('message', (message: 'wake' | 'stop') => {
  if (message === 'stop') {
    finish();
    return;
  }
  // Looks at once; a look that finds too few records waiting, too recently, schedules itself for later.
  schedule(0);
});
schedule(0);
