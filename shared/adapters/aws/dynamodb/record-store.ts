import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { AppError } from '../../../domain/errors.js';
import { IDEMPOTENCY_TTL_MS, type IdempotencyClaim } from '../../../domain/idempotency.js';
import { receiptOf, type Classification, type StoredRecord } from '../../../domain/record.js';
import type { CreateRecordOptions, CreateRecordResult, DeletedRecord, RecordStore } from '../../../ports.js';
import { recordFromItem, recordKey, recordToItem } from './record-item.js';
import type { TableNames } from './tables.js';
import { conditionFailed, throttled, transactWrite } from './transact.js';
import { countUnderQuota } from './usage-meter.js';

/** The idempotency item: which record a key stored, for which request, until when. */
interface IdempotencyItem {
  pk: string;
  request_hash: string;
  record_id: string;
  created_at: string;
  /** Epoch milliseconds; the condition checks it, since TTL deletes only eventually. */
  expires_at: number;
  /** Epoch seconds, for DynamoDB TTL. */
  ttl: number;
}

/**
 * Records on DynamoDB. A write is one TransactWriteItems: the conditional ADD on the tenant's monthly
 * counter (its condition is the record quota), the Put of the record, and, with an Idempotency-Key, the
 * Put of the key. Either all three happen or none does. The table's stream then carries the record to the
 * search index and the classification queue, so a stored record always reaches both.
 */
export class DynamoDbRecordStore implements RecordStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tables: Pick<TableNames, 'records' | 'usage' | 'idempotency'>,
    private readonly clock: () => number = Date.now,
  ) {}

  async create(tenantId: string, record: StoredRecord, options: CreateRecordOptions): Promise<CreateRecordResult> {
    const now = this.clock();
    const claim = options.idempotency;
    const outcome = await transactWrite(this.db, {
      TransactItems: [
        { Update: countUnderQuota(this.tables.usage, tenantId, options.month, 'records', options.recordQuota) },
        {
          Put: {
            TableName: this.tables.records,
            Item: recordToItem({ ...record, tenant_id: tenantId }),
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        ...(claim
          ? [
              {
                Put: {
                  TableName: this.tables.idempotency,
                  Item: this.idempotencyItem(tenantId, claim, record, now),
                  ConditionExpression: 'attribute_not_exists(pk) OR expires_at <= :now',
                  ExpressionAttributeValues: { ':now': now },
                  ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
                },
              },
            ]
          : []),
      ],
    });
    if (outcome.committed) return { receipt: receiptOf({ ...record, tenant_id: tenantId }), replayed: false };

    const [quota, put, key] = outcome.reasons;
    // An earlier write under the same key answers first, even when the quota has since run out.
    if (claim && key?.Code === 'ConditionalCheckFailed') {
      const previous = await this.previousWrite(tenantId, claim, key.Item);
      if (previous) {
        if (previous.request_hash !== claim.requestHash) {
          throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used for a different request');
        }
        return { receipt: { id: previous.record_id, created_at: previous.created_at, tenant_id: tenantId }, replayed: true };
      }
    }
    if (quota?.Code === 'ConditionalCheckFailed') {
      throw new AppError('record_quota_exceeded', 'The monthly record quota is used up');
    }
    // The key expired between the transaction and the read: the next attempt's condition lets it through.
    if (claim && key?.Code === 'ConditionalCheckFailed') return this.create(tenantId, record, options);
    throw new Error(
      `record write cancelled: ${outcome.reasons.map((r) => r.Code ?? 'None').join(', ')} (record put: ${put?.Code ?? 'None'})`,
    );
  }

  async get(tenantId: string, id: string): Promise<StoredRecord | null> {
    try {
      const { Item } = await this.db.send(
        new GetCommand({ TableName: this.tables.records, Key: recordKey(tenantId, id), ConsistentRead: true }),
      );
      return Item && Item.tenant_id === tenantId ? recordFromItem(Item) : null;
    } catch (error) {
      throw throttled(error) ?? error;
    }
  }

  async delete(tenantId: string, id: string): Promise<DeletedRecord | null> {
    try {
      // The condition names the tenant: another tenant's id, like an unknown one, deletes nothing.
      await this.db.send(
        new DeleteCommand({
          TableName: this.tables.records,
          Key: recordKey(tenantId, id),
          ConditionExpression: 'attribute_exists(pk) AND tenant_id = :tenant',
          ExpressionAttributeValues: { ':tenant': tenantId },
        }),
      );
      return { id, deleted_at: new Date(this.clock()).toISOString() };
    } catch (error) {
      if (conditionFailed(error)) return null;
      throw throttled(error) ?? error;
    }
  }

  async setClassification(tenantId: string, id: string, classification: Classification): Promise<boolean> {
    try {
      // The condition keeps a record that is gone from coming back as a bare classification item.
      await this.db.send(
        new UpdateCommand({
          TableName: this.tables.records,
          Key: recordKey(tenantId, id),
          UpdateExpression: 'SET classification = :c',
          ConditionExpression: 'attribute_exists(pk) AND tenant_id = :tenant',
          ExpressionAttributeValues: { ':c': classification, ':tenant': tenantId },
        }),
      );
      return true;
    } catch (error) {
      if (conditionFailed(error)) return false;
      throw throttled(error) ?? error;
    }
  }

  private idempotencyItem(tenantId: string, claim: IdempotencyClaim, record: StoredRecord, now: number): IdempotencyItem {
    const expiresAt = now + IDEMPOTENCY_TTL_MS;
    return {
      pk: idempotencyKey(tenantId, claim.key),
      request_hash: claim.requestHash,
      record_id: record.id,
      created_at: record.created_at,
      expires_at: expiresAt,
      ttl: Math.ceil(expiresAt / 1000),
    };
  }

  /** The live idempotency item that cancelled a write: from the cancellation when DynamoDB returned it, else read. */
  private async previousWrite(
    tenantId: string,
    claim: IdempotencyClaim,
    returned: Record<string, AttributeValue> | undefined,
  ): Promise<IdempotencyItem | null> {
    let item = returned ? (unmarshall(returned) as IdempotencyItem) : undefined;
    if (!item) {
      const { Item } = await this.db.send(
        new GetCommand({ TableName: this.tables.idempotency, Key: { pk: idempotencyKey(tenantId, claim.key) }, ConsistentRead: true }),
      );
      item = Item as IdempotencyItem | undefined;
    }
    return item && item.expires_at > this.clock() ? item : null;
  }
}

/** One partition per tenant and key, so no tenant's keys gather on one partition. */
function idempotencyKey(tenantId: string, key: string): string {
  return `${tenantId}#${key}`;
}
