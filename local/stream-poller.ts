import type { Logger } from '@aws-lambda-powertools/logger';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  ExpiredIteratorException,
  GetRecordsCommand,
  TrimmedDataAccessException,
  type _Record as StreamsRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { dynamoDbClient, dynamoDbStreamsClient, type DynamoDbClientConfig } from '../shared/adapters/aws/dynamodb/client.js';
import { BackgroundLoop } from '../shared/adapters/local/background-loop.js';
import { backoffDelay, MAX_RETRY_WAIT_MS } from '../shared/adapters/local/backoff.js';
import { toLambdaStreamRecord } from './stream-event.js';
import { isAfter, readyShards, refreshShards, shardIterator, type ShardState } from './stream-shards.js';

export interface StreamPollerOptions {
  /** Region and endpoint of DynamoDB Local; the stream is read from the same endpoint. */
  config: DynamoDbClientConfig;
  /** The table whose stream is followed (its latest stream). */
  tableName: string;
  /** The function the stream invokes, e.g. the indexer Lambda handler bound to a context. */
  handler: (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>;
  logger: Logger;
  /** Most records per invocation (the event source mapping's BatchSize), 1 to 1000. Default 100. */
  batchSize?: number;
  /** Retries of a failing batch before its records go to the on-failure destination. Default 3. */
  maxRetries?: number;
  /** The backoff's base: the n-th retry waits a random time up to this·2^(n−1), at most a minute (backoff.ts). Default 100 ms. */
  retryBackoffMs?: number;
  /** How long to wait between polls when no shard had records. Default 200 ms. */
  pollIntervalMs?: number;
  /** How often to look for new shards (on top of when a shard ends or a settle asks). Default 1000 ms. */
  shardRefreshMs?: number;
}

/** How one shard's turn in a pass went; only `empty` lets a pass count as quiet. */
type ShardOutcome = 'empty' | 'delivered' | 'waiting' | 'ended' | 'reset' | 'error';

interface SettleWaiter {
  afterPass: number;
  resolve: () => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * Plays the Lambda event source mapping of a DynamoDB stream, for DynamoDB Local: it reads every shard of
 * the table's stream (a parent shard to its end before its children) and invokes the handler with
 * Lambda-shaped batches. With ReportBatchItemFailures semantics, a batch that reports failures is
 * delivered again from its lowest failed record onward, after a backoff (backoff.ts), up to `maxRetries`
 * times; then its records are logged as sent to the on-failure destination and the shard moves on.
 *
 * Shards it has not seen are read from TRIM_HORIZON, and checkpoints live in memory only, so a restart
 * replays the whole retained stream. That is harmless: every index write is idempotent by record id and a
 * repeated classification only rewrites the suggestion.
 *
 * Its passes (one over the ready shards) run in a background loop (background-loop.ts), which gives it its
 * start and stop: a stopped poller cannot be started again. Each shard's turn catches and logs its own
 * error with the shard id; a pass fails, and the loop backs off, only when the stream cannot be listed.
 */
export class StreamPoller {
  private readonly tables;
  private readonly streams;
  private readonly batchSize: number;
  private readonly maxRetries: number;
  private readonly retryBackoffMs: number;
  private readonly pollIntervalMs: number;
  private readonly shardRefreshMs: number;
  private readonly shards = new Map<string, ShardState>();
  private readonly waiters = new Set<SettleWaiter>();
  private streamArn: string | undefined;
  private lastRefresh = 0;
  private lastRefreshPass = 0;
  private refreshRequested = true;
  private passesStarted = 0;
  private readonly loop: BackgroundLoop;

  constructor(private readonly options: StreamPollerOptions) {
    this.tables = dynamoDbClient(options.config);
    this.streams = dynamoDbStreamsClient(options.config);
    this.batchSize = options.batchSize ?? 100;
    this.maxRetries = options.maxRetries ?? 3;
    this.retryBackoffMs = options.retryBackoffMs ?? 100;
    this.pollIntervalMs = options.pollIntervalMs ?? 200;
    this.shardRefreshMs = options.shardRefreshMs ?? 1000;
    // One GetRecords call returns at most 1000 records, and a batch is one call here.
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1 || this.batchSize > 1000) {
      throw new Error(`batchSize must be an integer from 1 to 1000, got ${this.batchSize}`);
    }
    this.loop = new BackgroundLoop({
      name: 'stream poll',
      logger: options.logger,
      context: () => ({ table: options.tableName, stream_arn: this.streamArn }),
      backoff: { baseMs: this.pollIntervalMs, capMs: MAX_RETRY_WAIT_MS },
      pass: () => this.pass(),
    });
  }

  /** Starts polling the stream; a second call does nothing. */
  start(): void {
    this.loop.start();
  }

  /** Stops polling: lets the batch in flight finish, fails pending settles, and closes the clients. */
  async stop(): Promise<void> {
    await this.loop.stop();
    for (const waiter of this.waiters) this.endWait(waiter, new Error('the stream poller stopped'));
    this.tables.destroy();
    this.streams.destroy();
  }

  /**
   * Resolves once every change written to the table before this call has been delivered to the handler
   * (or, after its retries, to the on-failure destination): a pass that started after the call listed the
   * shards again and found every one of them empty. Rejects after `timeoutMs` or when the poller stops.
   * It trusts an empty GetRecords to mean "caught up", which holds on DynamoDB Local but not always on AWS.
   */
  settle(timeoutMs = 10_000): Promise<void> {
    const { state } = this.loop;
    if (state !== 'sleeping' && state !== 'running') return Promise.reject(new Error('the stream poller is not running'));
    return new Promise<void>((resolve, reject) => {
      const waiter: SettleWaiter = {
        afterPass: this.passesStarted,
        resolve,
        reject,
        timer: setTimeout(() => this.endWait(waiter, new Error(`the stream did not settle within ${timeoutMs} ms`)), timeoutMs),
      };
      this.waiters.add(waiter);
      this.refreshRequested = true;
      // Poll now instead of after the idle interval; a pass in flight is followed at once by one that
      // starts after this call, as the waiter needs.
      this.loop.wake();
    });
  }

  private endWait(waiter: SettleWaiter, error?: Error): void {
    if (!this.waiters.delete(waiter)) return;
    clearTimeout(waiter.timer);
    if (error) waiter.reject(error);
    else waiter.resolve();
  }

  /**
   * One pass over every ready shard. Resolves to the delay before the next pass; rejects only when the
   * stream cannot be found or listed (the loop logs it as `stream poll pass failed` and backs off).
   */
  private async pass(): Promise<number> {
    const passNo = ++this.passesStarted;
    this.streamArn ??= await this.latestStreamArn();
    if (this.refreshRequested || Date.now() - this.lastRefresh >= this.shardRefreshMs) {
      const startedAt = Date.now();
      this.refreshRequested = false;
      await refreshShards(this.streams, this.streamArn, this.shards);
      this.lastRefresh = startedAt;
      this.lastRefreshPass = passNo;
    }

    const { open, ready } = readyShards(this.shards);
    const outcomes = await Promise.all(ready.map((shard) => this.pollShard(shard)));

    // Every shard holding a change written before a settle call is listed by a refresh made after it, so
    // once such a refresh happened, a pass that finds every listed shard empty has delivered all of them.
    if (ready.length === open.length && outcomes.every((o) => o === 'empty')) {
      for (const waiter of this.waiters) {
        if (waiter.afterPass < passNo && this.lastRefreshPass > waiter.afterPass) this.endWait(waiter);
      }
    }
    if (outcomes.some((o) => o === 'delivered' || o === 'ended')) return 0;
    const retryAts = open.flatMap((shard) => (shard.pending ? [shard.pending.retryAt] : []));
    return Math.max(0, Math.min(this.pollIntervalMs, ...retryAts.map((at) => at - Date.now())));
  }

  /** One shard's turn: a pending retry when it is due, otherwise the next GetRecords. Never throws. */
  private async pollShard(shard: ShardState): Promise<ShardOutcome> {
    try {
      if (shard.pending) {
        if (Date.now() < shard.pending.retryAt) return 'waiting';
        await this.deliver(shard, shard.pending.records, shard.pending.retries);
        return 'delivered';
      }
      if (shard.iterator === undefined) {
        shard.iterator = await shardIterator(this.streams, this.streamArn!, shard, this.options.logger);
        shard.rewind = false;
      }
      let output;
      try {
        output = await this.streams.send(new GetRecordsCommand({ ShardIterator: shard.iterator, Limit: this.batchSize }));
      } catch (error) {
        if (!(error instanceof ExpiredIteratorException || error instanceof TrimmedDataAccessException)) throw error;
        // Expired: an iterator lives 15 minutes; a new one resumes after the last record read. Trimmed: the
        // iterator points before the oldest retained record, so read again from there. DynamoDB Local also
        // says so when an iterator taken on an empty shard meets a first record whose number skips ahead.
        shard.iterator = undefined;
        shard.rewind = error instanceof TrimmedDataAccessException;
        this.options.logger.warn('shard iterator no longer usable; taking a new one', { shard_id: shard.id, reason: error.name });
        return 'reset';
      }
      shard.iterator = output.NextShardIterator;
      // After a rewind, what was read before comes again: skip it.
      const records = (output.Records ?? []).filter((r) => isAfter(r.dynamodb?.SequenceNumber, shard.lastRead));
      const newest = output.Records?.at(-1)?.dynamodb?.SequenceNumber;
      if (newest !== undefined && isAfter(newest, shard.lastRead)) shard.lastRead = newest;
      if (output.NextShardIterator === undefined) {
        shard.ended = true;
        // Its children become readable now; list the shards again to find them.
        this.refreshRequested = true;
      }
      if (records.length > 0) await this.deliver(shard, records, 0);
      if (records.length > 0 || (output.Records?.length ?? 0) > 0) return 'delivered';
      return shard.ended ? 'ended' : 'empty';
    } catch (error) {
      this.options.logger.error('stream shard poll failed', { shard_id: shard.id, stream_arn: this.streamArn, error: error as Error });
      return 'error';
    }
  }

  /**
   * Invokes the handler with one batch and applies its answer as the event source mapping does: on
   * failures it keeps the records from the lowest failed one onward for another delivery, or hands them to
   * the on-failure destination once the retries are used up.
   */
  private async deliver(shard: ShardState, records: StreamsRecord[], retries: number): Promise<void> {
    const { handler, logger, config } = this.options;
    const streamArn = this.streamArn!;
    let failedFrom: number | undefined;
    try {
      const response = await handler({ Records: records.map((r) => toLambdaStreamRecord(r, streamArn, config.region)) });
      failedFrom = this.lowestFailure(records, response);
    } catch (error) {
      // A function error fails the whole batch.
      logger.error('stream handler threw; the whole batch fails', { shard_id: shard.id, records: records.length, error: error as Error });
      failedFrom = 0;
    }
    shard.pending = undefined;
    if (failedFrom === undefined) return;
    const failed = records.slice(failedFrom);
    const refs = failed.map((r) => ({ sequence_number: r.dynamodb?.SequenceNumber, event_name: r.eventName, keys: r.dynamodb?.Keys }));
    if (retries >= this.maxRetries) {
      logger.error('stream records sent to the on-failure destination after their last retry', {
        shard_id: shard.id,
        stream_arn: streamArn,
        start_sequence_number: failed[0]?.dynamodb?.SequenceNumber,
        end_sequence_number: failed.at(-1)?.dynamodb?.SequenceNumber,
        batch_size: failed.length,
        retries,
        records: refs,
      });
      return;
    }
    const delayMs = backoffDelay(retries + 1, { baseMs: this.retryBackoffMs, capMs: MAX_RETRY_WAIT_MS });
    logger.warn('stream records failed; delivering again from the lowest failure', {
      shard_id: shard.id,
      start_sequence_number: failed[0]?.dynamodb?.SequenceNumber,
      batch_size: failed.length,
      retry: retries + 1,
      delay_ms: delayMs,
    });
    shard.pending = { records: failed, retries: retries + 1, retryAt: Date.now() + delayMs };
  }

  /** The batch index of the lowest reported failure, or undefined when every record succeeded. */
  private lowestFailure(records: StreamsRecord[], response: DynamoDBBatchResponse | void): number | undefined {
    const failures = response?.batchItemFailures ?? [];
    if (failures.length === 0) return undefined;
    const positions = failures.map((f) => {
      const i = records.findIndex((r) => r.dynamodb?.SequenceNumber === f.itemIdentifier);
      // Lambda treats an empty or unknown identifier as a failure of the whole batch.
      return f.itemIdentifier && i >= 0 ? i : 0;
    });
    return Math.min(...positions);
  }

  private async latestStreamArn(): Promise<string> {
    const { Table } = await this.tables.send(new DescribeTableCommand({ TableName: this.options.tableName }));
    if (!Table?.LatestStreamArn) throw new Error(`table ${this.options.tableName} has no stream`);
    this.options.logger.info('following the table stream', { table: this.options.tableName, stream_arn: Table.LatestStreamArn });
    return Table.LatestStreamArn;
  }
}
