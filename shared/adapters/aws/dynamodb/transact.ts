import { TransactionCanceledException, type CancellationReason } from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  TransactWriteCommand,
  type BatchWriteCommandOutput,
  type DynamoDBDocumentClient,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { AppError } from '../../../domain/errors.js';

/** How often a transaction cancelled by a concurrent one on the same item is tried again. */
const CONFLICT_ATTEMPTS = 8;

/** The outcome of a transaction: committed, or cancelled with one reason per item, in order. */
export type TransactOutcome = { committed: true } | { committed: false; reasons: CancellationReason[] };

/**
 * Runs one TransactWriteItems. A cancellation by a condition comes back as reasons for the caller to read;
 * a cancellation by a concurrent transaction on the same item (TransactionConflict) commits nothing, so it
 * is tried again after a jittered pause. The SDK gives each call a ClientRequestToken and keeps it across
 * its own retries, so a retry after a lost response is not applied twice.
 */
export async function transactWrite(db: DynamoDBDocumentClient, input: TransactWriteCommandInput): Promise<TransactOutcome> {
  for (let attempt = 1; ; attempt++) {
    try {
      await db.send(new TransactWriteCommand(input));
      return { committed: true };
    } catch (error) {
      const reasons = cancellationReasons(error);
      if (reasons === null) throw throttled(error) ?? error;
      const conflict = reasons.some((r) => r.Code === 'TransactionConflict');
      if (!conflict) return { committed: false, reasons };
      if (attempt >= CONFLICT_ATTEMPTS) {
        throw new AppError('rate_limited', 'Too many concurrent writes for this tenant; retry shortly', 1);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(200, 10 * 2 ** attempt)));
    }
  }
}

function cancellationReasons(error: unknown): CancellationReason[] | null {
  if (error instanceof TransactionCanceledException) return error.CancellationReasons ?? [];
  return null;
}

const THROTTLING = new Set(['ThrottlingException', 'ProvisionedThroughputExceededException', 'RequestLimitExceeded']);

/**
 * DynamoDB throttling that outlasted the SDK's retries, as the 429 the caller can act on; null for any
 * other error. A tenant hits this only past the table's limits, which the rate limit keeps it far from.
 */
export function throttled(error: unknown): AppError | null {
  const name = (error as { name?: unknown } | null)?.name;
  return typeof name === 'string' && THROTTLING.has(name)
    ? new AppError('rate_limited', 'The service is busy; retry shortly', 1)
    : null;
}

/** A DynamoDB call whose throttling, past the SDK's retries, becomes the 429 the caller can act on. */
export async function guarded<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    throw throttled(error) ?? error;
  }
}

/** Whether a single-item write failed its ConditionExpression (a transaction reports it per item instead). */
export function conditionFailed(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === 'ConditionalCheckFailedException';
}

/**
 * Deletes items by key, 25 a request, until DynamoDB has processed every one (what it leaves unprocessed
 * is sent again after a growing pause); returns how many keys it was given.
 */
export async function batchDelete(db: DynamoDBDocumentClient, table: string, keys: readonly Record<string, unknown>[]): Promise<number> {
  for (let i = 0; i < keys.length; i += 25) {
    let requests: NonNullable<BatchWriteCommandOutput['UnprocessedItems']>[string] | undefined = keys
      .slice(i, i + 25)
      .map((Key) => ({ DeleteRequest: { Key } }));
    for (let attempt = 0; requests && requests.length > 0; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 25 * 2 ** attempt)));
      try {
        const answer: BatchWriteCommandOutput = await db.send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
        requests = answer.UnprocessedItems?.[table];
      } catch (error) {
        throw throttled(error) ?? error;
      }
    }
  }
  return keys.length;
}
