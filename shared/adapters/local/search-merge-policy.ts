import { MAX_RETRY_WAIT_MS, type Backoff } from './backoff.js';
import type { SearchMerge } from './search-merge.js';

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

/** The waits after failed merges in a row, on either merger: from 100 ms up to a minute. */
export const MERGE_BACKOFF: Backoff = { baseMs: 100, capMs: MAX_RETRY_WAIT_MS };

/** What a look did: the wait before the next look, and what it merged (null when it merged nothing). */
export interface MergeLook {
  nextMs: number;
  /** `pending`: at most this many records waited before the merge (SearchMerge.waitingAtMost). */
  merged: { docs: number; pending: number } | null;
}

/** How a merger looks: how long to sleep when nothing waits, and how a merge steps and stops. */
export interface MergeLookOptions {
  /** The wait before the next look when no record waits. */
  idleMs: number;
  /** The work of one step of a batch, in ms (default: the batch in one step). */
  stepMs?: number;
  /** Asked between steps: a batch stopped part-way resumes at the next merge. */
  stopped?: () => boolean;
}

/**
 * The merge policy applied, the one pass of both mergers (search-merger.ts: on the server's thread, and on
 * a thread of its own): each look merges one batch once `minDocs` records wait or the first of them has
 * waited `maxDelayMs`, and says when to look again. A look that fails leaves the wait where it was.
 */
export class MergeScheduler {
  private waitingSince: number | null = null;

  constructor(
    private readonly merge: SearchMerge,
    private readonly policy: MergePolicy,
    private readonly options: MergeLookOptions,
  ) {}

  /**
   * One look: merges a batch if the policy says so; after a merge the next look is at once (more may wait).
   * It decides on SearchMerge.waitingAtMost, one row, rather than a count of the records waiting: the merge
   * thread looks at every wake, once per turn of the server's event loop that wrote, and counting a few
   * thousand rows each time took a tenth of its time under load. Records deleted above the mark count until
   * a merge: at worst a merge starts early, or finds nothing and the look waits as when nothing waits.
   */
  look(): MergeLook {
    const waiting = this.merge.waitingAtMost();
    if (waiting === 0) {
      this.waitingSince = null;
      return { nextMs: this.options.idleMs, merged: null };
    }
    this.waitingSince ??= Date.now();
    const waited = Date.now() - this.waitingSince;
    if (waiting < this.policy.minDocs && waited < this.policy.maxDelayMs) return { nextMs: this.policy.maxDelayMs - waited, merged: null };
    const docs = this.merge.next(this.policy.maxDocs, this.options.stepMs, this.options.stopped);
    this.waitingSince = null;
    // Nothing taken in: the records above the mark were deleted, another process merged them, or a stop.
    if (docs === 0) return { nextMs: this.options.idleMs, merged: null };
    return { nextMs: 0, merged: { docs, pending: waiting } };
  }

  /** Merges every record waiting, now. */
  mergeAll(): void {
    while (this.merge.next(this.policy.maxDocs) > 0);
    this.waitingSince = null;
  }
}
