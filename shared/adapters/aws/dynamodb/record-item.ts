import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue as StreamAttributeValue } from 'aws-lambda';
import { deserializeRecord, serializeRecord, type SerializedRecord, type StoredRecord } from '../../../domain/record.js';

/** How many partitions one tenant's records spread over. */
export const RECORD_SHARDS = 16;

/**
 * The key of a record. The partition is the tenant plus the last hex digit of the id, which is random in
 * a UUIDv7, so a tenant's writes spread evenly over 16 partition keys. With the tenant alone, every write
 * of a tenant would land on one partition key, and since UUIDv7 sort keys only grow, DynamoDB's split for
 * heat could not spread them: one busy tenant would hit the 1000 WCU/s limit of a single partition.
 * Nothing reads a tenant's records as a range (search is the index's job), so the shard costs nothing.
 */
export function recordKey(tenantId: string, id: string): { pk: string; id: string } {
  const digit = id.at(-1)?.toLowerCase() ?? '0';
  return { pk: `${tenantId}#${/^[0-9a-f]$/.test(digit) ? digit : '0'}`, id };
}

/** The item stored for a record: its key, and the record with `metadata` as its JSON text. */
export function recordToItem(record: StoredRecord): Record<string, unknown> {
  return { ...recordKey(record.tenant_id, record.id), ...serializeRecord(record) };
}

/**
 * Turns a stored item (as the document client returns it) back into the domain record. An item written
 * before records had versions has no `version`, `updated_at` or `superseded_by`: it reads as version 1,
 * never updated, current.
 */
export function recordFromItem(item: Record<string, unknown>): StoredRecord {
  return deserializeRecord({ ...item, version: item.version ?? 1 } as unknown as SerializedRecord);
}

/** Turns a DynamoDB stream image (as the Lambda event carries it) into the domain record. */
export function recordFromImage(image: Record<string, StreamAttributeValue>): StoredRecord {
  return recordFromItem(unmarshall(image as Record<string, AttributeValue>));
}
