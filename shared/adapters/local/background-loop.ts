import { backoffDelay, MAX_RETRY_WAIT_MS, type Backoff } from './backoff.js';

/** A pass's answer that means: sleep, with no timer, until `wake` or `stop`. */
export const UNTIL_WOKEN = Number.POSITIVE_INFINITY;

/** Where a loop reports a failed pass: a Powertools Logger fits, and so does a thread that posts to its server. */
export interface LoopLogger {
  error(message: string, details: Record<string, unknown>): void;
}

/** What a loop runs, and how it reports and retries a pass that failed. */
export interface BackgroundLoopOptions {
  /** Names the loop in its log line: `<name> pass failed`. */
  name: string;
  /**
   * One pass of work. It returns (or resolves to) the wait before the next pass: 0 for at once, UNTIL_WOKEN
   * for until woken. A pass that throws is logged, and the next one comes after the backoff.
   */
  pass: () => number | Promise<number>;
  logger: LoopLogger;
  /** More fields for a failed pass's log line, read when it failed (the jobs it held, the stream it read). */
  context?: () => Record<string, unknown>;
  /** The waits after failed passes in a row (backoff.ts). Default: from 100 ms up to a minute. */
  backoff?: Backoff;
  /** The jitter's source; tests fix it. */
  random?: () => number;
  /** Its timers keep no process alive: for a loop that its owner may leave running (the inline merger). */
  unref?: boolean;
}

/** created → sleeping ⇄ running → stopping → stopped; stop() from created goes straight to stopped. */
export type LoopState = 'created' | 'sleeping' | 'running' | 'stopping' | 'stopped';

/** setTimeout fires at once for any wait longer than this (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The one background loop of the local runtime: the classification job loop, the stream poller, the merge
 * thread (and the inline merger) and the forget queue each run their passes in one. It lives among the local
 * adapters because the merge thread is an adapter, which may import nothing from local/.
 *
 * Its contract: `start` runs a first pass soon (never inside the call) and is a no-op after the first
 * time; passes never overlap; `wake` runs a pass now instead of after the wait, and a wake during a pass
 * runs another as soon as it ends, so that something the waker wrote before waking is seen by a pass that
 * began after it; `stop` runs no pass after it is called and resolves once the pass in flight has ended. A
 * stopped loop stays stopped. A pass catches nothing itself: the loop catches its error, logs it with the
 * loop's name, and backs off (backoff.ts); a pass that succeeds resets the backoff.
 */
export class BackgroundLoop {
  private current: LoopState = 'created';
  private done: Promise<void> = Promise.resolve();
  /** Failed passes in a row: the exponent of the backoff. */
  private failures = 0;
  private wokenWhileRunning = false;
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private resume: (() => void) | undefined;
  private readonly backoff: Backoff;

  constructor(private readonly options: BackgroundLoopOptions) {
    this.backoff = options.backoff ?? { baseMs: 100, capMs: MAX_RETRY_WAIT_MS };
  }

  /** Where the loop is; `sleeping` and `running` are the two states of a started loop. */
  get state(): LoopState {
    return this.current;
  }

  /** Starts the loop: its first pass runs on the next turn of the event loop. Calls after the first do nothing. */
  start(): void {
    if (this.current !== 'created') return;
    this.current = 'sleeping';
    this.done = this.run();
  }

  /** Runs a pass now rather than after the wait, or right after the pass in flight. Does nothing unless started. */
  wake(): void {
    if (this.current === 'running') this.wokenWhileRunning = true;
    // Already due on the next turn: nothing to move. Several wakes in one turn run one pass.
    else if (this.current === 'sleeping' && this.immediate === undefined) this.arm(0);
  }

  /** Stops the loop: no pass starts after this call; resolves once the pass in flight, if any, has ended. */
  stop(): Promise<void> {
    if (this.current === 'created') this.current = 'stopped';
    if (this.current === 'stopped' || this.current === 'stopping') return this.done;
    this.current = 'stopping';
    this.disarm();
    this.wakeUp();
    return this.done;
  }

  private async run(): Promise<void> {
    let waitMs = 0;
    while (!this.stopping()) {
      await this.sleep(waitMs);
      if (this.stopping()) break;
      this.current = 'running';
      this.wokenWhileRunning = false;
      waitMs = await this.pass();
      if (this.stopping()) break;
      if (this.wokenWhileRunning) waitMs = 0;
      this.current = 'sleeping';
    }
    this.current = 'stopped';
  }

  /** Read through a method: TypeScript would otherwise keep `current` narrowed across the awaits. */
  private stopping(): boolean {
    return this.current === 'stopping';
  }

  /** One pass, which never rejects: resolves to the wait before the next. */
  private async pass(): Promise<number> {
    const { name, logger, context, random } = this.options;
    try {
      const waitMs = await this.options.pass();
      this.failures = 0;
      return waitMs;
    } catch (error) {
      this.failures++;
      const retryMs = backoffDelay(this.failures, this.backoff, random);
      logger.error(`${name} pass failed`, { loop: name, failures: this.failures, retry_ms: retryMs, ...context?.(), error });
      return retryMs;
    }
  }

  private sleep(waitMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      this.resume = resolve;
      this.arm(waitMs);
    });
  }

  /** Sets the wake-up: the next turn for 0 (after pending I/O, unlike a microtask), a timer, or none for UNTIL_WOKEN. */
  private arm(waitMs: number): void {
    this.disarm();
    if (!(waitMs > 0)) {
      this.immediate = setImmediate(() => this.wakeUp());
    } else if (waitMs !== UNTIL_WOKEN) {
      this.timer = setTimeout(() => this.wakeUp(), Math.min(waitMs, MAX_TIMER_MS));
      if (this.options.unref) this.timer.unref();
    }
  }

  private disarm(): void {
    clearTimeout(this.timer);
    clearImmediate(this.immediate);
    this.timer = this.immediate = undefined;
  }

  private wakeUp(): void {
    this.timer = this.immediate = undefined;
    const resume = this.resume;
    this.resume = undefined;
    resume?.();
  }
}
