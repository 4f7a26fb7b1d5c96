import type { Logger } from '@aws-lambda-powertools/logger';
import { Worker } from 'node:worker_threads';
import { threadEntry } from '../shared/adapters/local/thread-entry.js';
import type { LocalConfig } from './config.js';

/** The classification worker as the local runtime runs it: a job loop (job-loop.ts), here or on a thread. */
export interface ClassificationLoop {
  /** Starts classifying; a second call does nothing. */
  start(): void;
  /** Stops, after the pass in flight. */
  stop(): Promise<void>;
}

/** What the thread is started with (classification-thread.ts). */
export interface ClassificationThreadData {
  file: string;
  pollMs: number;
  logLevel: LocalConfig['logLevel'];
}

/** How long a thread that died waits before it starts again. */
const RESTART_MS = 1000;

/**
 * The embedded server's classification on a thread of its own, with its own connection to the database
 * file: it claims the jobs, runs the classifier Lambda's handler on them and stores the answers, as the
 * job loop does on the server's thread in the AWS-shaped mode. Classifying a record (the model and four
 * statements) took about a third as long as writing it, on the thread that answers requests; there, it
 * competes for the cores and not for that thread.
 *
 * A thread that fails is logged and started again after a second; its leases run out and its jobs come back.
 */
export class ClassificationThread implements ClassificationLoop {
  private worker: Worker | null = null;
  private stopping: Promise<void> | null = null;
  private restart: NodeJS.Timeout | null = null;

  constructor(
    private readonly data: ClassificationThreadData,
    private readonly logger: Logger,
    private readonly entry: URL = threadEntry(import.meta.url, 'classification-thread'),
  ) {}

  start(): void {
    if (this.worker || this.stopping) return;
    const worker = new Worker(this.entry, { workerData: this.data });
    worker.on('error', (error) => this.logger.error('the classification thread failed', { error }));
    worker.on('exit', (code) => {
      if (this.worker !== worker) return;
      this.worker = null;
      if (this.stopping) return;
      this.logger.error('the classification thread ended; starting it again', { exit_code: code, in_ms: RESTART_MS });
      this.restart = setTimeout(() => {
        this.restart = null;
        this.start();
      }, RESTART_MS).unref();
    });
    this.worker = worker;
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (this.restart) clearTimeout(this.restart);
      const worker = this.worker;
      if (!worker) return;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage('stop');
      await exited;
    })();
    return this.stopping;
  }
}
