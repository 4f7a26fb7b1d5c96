import type { Logger } from '@aws-lambda-powertools/logger';
import {
  DescribeStreamCommand,
  GetShardIteratorCommand,
  TrimmedDataAccessException,
  type DynamoDBStreamsClient,
  type _Record as StreamsRecord,
} from '@aws-sdk/client-dynamodb-streams';

/** What the stream poller knows about one shard of a DynamoDB stream. */
export interface ShardState {
  id: string;
  parentId: string | undefined;
  /** Where the next GetRecords reads; undefined until the first read, or after the iterator expired. */
  iterator: string | undefined;
  /** The sequence number of the last record read from the shard: where a new iterator resumes. */
  lastRead: string | undefined;
  /** The next iterator starts at TRIM_HORIZON even though records were read (they are skipped again). */
  rewind: boolean;
  /** GetRecords returned no NextShardIterator: the shard is closed and every record of it was read. */
  ended: boolean;
  /** Records that failed and wait to be delivered again, from the lowest failure onward. */
  pending: { records: StreamsRecord[]; retries: number; retryAt: number } | undefined;
}

/** True when the shard is closed, read to its end, and owes no delivery. */
export function isDone(shard: ShardState): boolean {
  return shard.ended && shard.pending === undefined;
}

/**
 * The shards to read now: every unfinished shard whose parent is finished or no longer listed. A child
 * shard holds changes made after its parent's, so it waits until the parent is read to its end.
 */
export function readyShards(shards: Map<string, ShardState>): { open: ShardState[]; ready: ShardState[] } {
  const open = [...shards.values()].filter((shard) => !isDone(shard));
  const ready = open.filter((shard) => {
    const parent = shard.parentId === undefined ? undefined : shards.get(shard.parentId);
    return parent === undefined || isDone(parent);
  });
  return { open, ready };
}

/** Lists the stream's shards (every DescribeStream page), adds the new ones, and forgets finished ones it no longer lists. */
export async function refreshShards(client: DynamoDBStreamsClient, streamArn: string, shards: Map<string, ShardState>): Promise<void> {
  const listed = new Map<string, string | undefined>();
  let exclusiveStart: string | undefined;
  do {
    const { StreamDescription } = await client.send(new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: exclusiveStart }));
    for (const { ShardId, ParentShardId } of StreamDescription?.Shards ?? []) if (ShardId) listed.set(ShardId, ParentShardId);
    exclusiveStart = StreamDescription?.LastEvaluatedShardId;
  } while (exclusiveStart !== undefined);

  for (const [id, parentId] of listed) {
    if (!shards.has(id)) {
      shards.set(id, { id, parentId, iterator: undefined, lastRead: undefined, rewind: false, ended: false, pending: undefined });
    }
  }
  // Trimmed shards drop out of the listing after 24 h; forgetting them keeps the map from growing.
  for (const [id, shard] of shards) if (isDone(shard) && !listed.has(id)) shards.delete(id);
}

/**
 * A new iterator for a shard: after the last record read when there is one, else TRIM_HORIZON, the oldest
 * record the stream retains (a shard first seen is read from its start, and so is a rewound one).
 */
export async function shardIterator(client: DynamoDBStreamsClient, streamArn: string, shard: ShardState, logger: Logger): Promise<string> {
  const base = { StreamArn: streamArn, ShardId: shard.id };
  if (shard.lastRead !== undefined && !shard.rewind) {
    try {
      const { ShardIterator } = await client.send(
        new GetShardIteratorCommand({ ...base, ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: shard.lastRead }),
      );
      if (ShardIterator) return ShardIterator;
    } catch (error) {
      if (!(error instanceof TrimmedDataAccessException)) throw error;
      logger.warn('the last read record was trimmed from the stream; reading from the oldest retained one', { shard_id: shard.id });
    }
  }
  const { ShardIterator } = await client.send(new GetShardIteratorCommand({ ...base, ShardIteratorType: 'TRIM_HORIZON' }));
  if (!ShardIterator) throw new Error(`no iterator for shard ${shard.id}`);
  return ShardIterator;
}

/** True when stream sequence number `a` comes after `b` (both decimal strings, of any length). */
export function isAfter(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return true;
  try {
    return BigInt(a) > BigInt(b);
  } catch {
    return true;
  }
}
