/**
 * The one retry policy of the service's background work (background-loop.ts and what its users retry:
 * classification jobs, stream batches, forget deliveries, merges): capped exponential backoff with full
 * jitter. It sits beside the loop, among the local adapters, because the merge thread, an adapter, uses it.
 */

/** Capped exponential backoff: the ceiling of the n-th retry's wait is `baseMs`·2^(n−1), at most `capMs`. */
export interface Backoff {
  /** The ceiling of the first retry's wait; each further retry doubles it. */
  baseMs: number;
  /** The longest any retry waits. */
  capMs: number;
}

/** A minute: the longest a background retry waits, whatever retries. */
export const MAX_RETRY_WAIT_MS = 60_000;

/**
 * The wait in whole milliseconds before retry number `attempt` (1 for the first): uniformly random from 0
 * up to min(capMs, baseMs·2^(attempt−1)). Full jitter, because retries that failed together (one outage,
 * one bad batch) would otherwise all come back at the same moment and fail together again.
 */
export function backoffDelay(attempt: number, { baseMs, capMs }: Backoff, random: () => number = Math.random): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(random() * ceiling);
}
