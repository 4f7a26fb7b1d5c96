import type { Logger } from '@aws-lambda-powertools/logger';
import type { ApiGatewayKeyRegistry } from '../shared/adapters/aws/gateway/usage-plans.js';
import type { SqliteJobQueue } from '../shared/adapters/local/job-queue.js';
import type { CursorSealer } from '../shared/domain/cursor-sealer.js';
import type { KeyStore, RecordStore, SearchIndex, UsageMeter } from '../shared/ports.js';
import type { ClassificationLoop, ClassificationThreadData } from './classification.js';

/** The ports the local runtime serves from, whichever backend holds them. */
export interface Backend {
  records: RecordStore;
  search: SearchIndex;
  keys: KeyStore;
  usage: UsageMeter;
  /** The classification queue: the SQLite outbox in both backends (it plays SQS in the AWS-shaped one). */
  jobs: SqliteJobQueue;
  /**
   * The sealer of listing cursors, its key kept in the SQLite file of both backends (the AWS-shaped one
   * keeps its index there), so that a restart on the same data keeps cursors valid.
   */
  cursors: CursorSealer;
  /**
   * Records written and not yet merged into the search index (its tail, which every search reads), for the
   * operator's metrics: one count on the SQLite file. In the AWS-shaped mode, those the stream has delivered.
   */
  mergeBacklog(): number;
  /**
   * The classification worker on a thread of its own (classification.ts), where the backend's stores can be
   * opened there: the embedded one. Null in the AWS-shaped one, whose records are in DynamoDB: the server runs
   * the job loop on its own thread.
   */
  classificationThread: ((settings: Omit<ClassificationThreadData, 'file'>, logger: Logger) => ClassificationLoop) | null;
  /**
   * A count that moves whenever what a key's authorization says may have changed (a key revoked, ended or
   * changed, a tenant's limits changed, a tenant deleted), read by the gateway before it reuses a cached
   * authorization: the embedded backend's, moved by its database's triggers in whichever process makes the
   * change, so that a revoke by the admin CLI is refused at the next request. Null in the AWS-shaped one,
   * whose gateway keeps an authorization for MEMORY_AUTH_CACHE_SECONDS, as API Gateway keeps it for its TTL.
   */
  authGeneration: (() => number) | null;
  /** Where the data lives, for the start-up line. */
  describe: string;
  /** Starts background work: the search index's merges, and the stream poller in the AWS-shaped backend. */
  start(): void;
  /** Periodic housekeeping; returns what it did, for the log. */
  sweep(): { purgedIdempotencyKeys: number };
  /** Waits until every write so far is searchable (immediate on SQLite). */
  settle(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** The stores the admin CLI needs, and API Gateway's side of the keys when it works on a deployed stack. */
export interface AdminStores {
  keys: KeyStore;
  usage: UsageMeter;
  /** For export, import and tenant delete. On DynamoDB without a forget queue: a forget would run to its end in the call. */
  records: RecordStore;
  /** Set only in the dynamodb backend with the MEMORY_API_* settings; null locally, where no gateway checks keys. */
  gateway: Pick<ApiGatewayKeyRegistry, 'register' | 'disable' | 'move'> | null;
  close(): void;
}

/**
 * The admin CLI was pointed at data that does not exist (a mistyped MEMORY_DATA_DIR, DynamoDB Local
 * restarted without the server), and was not asked to create it. `details` name what is missing.
 */
export class NoDatabaseError extends Error {
  constructor(
    message: string,
    readonly details: Record<string, string>,
  ) {
    super(message);
  }
}
