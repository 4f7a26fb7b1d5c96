import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { positionBefore, type RecordFilters } from '../../../domain/listing.js';
import type { StoredRecord } from '../../../domain/record.js';
import { RECORD_SHARDS } from './record-item.js';
import { recordFromItem } from './record-item.js';
import { guarded } from './transact.js';

/**
 * Reading a tenant's records in order, over its 16 partition keys (record-item.ts says why there are 16).
 * Within a partition the sort key is the UUIDv7 id, whose first 48 bits are the millisecond of `created_at`
 * (record.ts makes both from one instant, and an import keeps only records for which that holds), so the id
 * order of a partition is its (`created_at`, `id`) order, and a time bound is a bound on the id.
 */

/** The id prefix of a millisecond: every UUIDv7 of that millisecond starts with it, and sorts after it. */
export function idPrefix(ms: number): string {
  const hex = Math.max(0, ms).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}`;
}

/** The id bounds of a read, both inclusive; the caller checks the exact bounds on each record it gets. */
export interface IdRange {
  from?: string | undefined;
  to?: string | undefined;
}

/** The id range that holds every record the time filters keep (`since` inclusive, `until` exclusive). */
export function idRangeOf(filters: Pick<RecordFilters, 'since' | 'until'>): IdRange {
  return {
    from: filters.since === undefined ? undefined : idPrefix(Date.parse(filters.since)),
    // Every id of an earlier millisecond sorts before this prefix, and it is no id itself.
    to: filters.until === undefined ? undefined : idPrefix(Date.parse(filters.until)),
  };
}

export interface ShardRead {
  order: 'asc' | 'desc';
  range: IdRange;
  /** Equality filters DynamoDB applies before returning items (they still cost their read). */
  equals: Partial<Record<'agent_id' | 'type' | 'client', string>>;
  /** The exact test of a record; what fails it is skipped. */
  keep: (record: StoredRecord) => boolean;
  /** Items per request. */
  pageSize: number;
}

/**
 * The records of one partition, in order, page after page: strongly consistent, so that a delete that has
 * answered is never read back.
 */
export async function* shardRecords(
  db: DynamoDBDocumentClient,
  table: string,
  pk: string,
  read: ShardRead,
): AsyncGenerator<StoredRecord[]> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':pk': pk };
  let key = 'pk = :pk';
  const { from, to } = read.range;
  if (from !== undefined || to !== undefined) names['#id'] = 'id';
  if (from !== undefined && to !== undefined) {
    if (from > to) return;
    key += ' AND #id BETWEEN :from AND :to';
  } else if (from !== undefined) key += ' AND #id >= :from';
  else if (to !== undefined) key += ' AND #id <= :to';
  if (from !== undefined) values[':from'] = from;
  if (to !== undefined) values[':to'] = to;
  const filter: string[] = [];
  for (const [field, value] of Object.entries(read.equals)) {
    if (value === undefined) continue;
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    filter.push(`#${field} = :${field}`);
  }
  let start: Record<string, unknown> | undefined;
  do {
    const page = await guarded(
      db.send(
        new QueryCommand({
          TableName: table,
          KeyConditionExpression: key,
          ...(filter.length > 0 ? { FilterExpression: filter.join(' AND ') } : {}),
          ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
          ExpressionAttributeValues: values,
          ScanIndexForward: read.order === 'asc',
          ConsistentRead: true,
          Limit: read.pageSize,
          ExclusiveStartKey: start,
        }),
      ),
    );
    yield (page.Items ?? []).map(recordFromItem).filter(read.keep);
    start = page.LastEvaluatedKey;
  } while (start);
}

/** The partition keys of a tenant's records. */
export function shardKeys(tenantId: string): string[] {
  return Array.from({ length: RECORD_SHARDS }, (_, i) => `${tenantId}#${i.toString(16)}`);
}

/**
 * The first `limit` records of the tenant in the read's order: a merge of the 16 partitions' ordered reads.
 * Each partition is read a page at a time, and a page is asked for only when the merge needs it (the
 * partition's next record could be the next of all): with records spread evenly, a listing of `limit` reads
 * about 2 × `limit` items in 16 requests, read side by side. A filter that few records pass makes a
 * partition read on until it has one that passes or ends, so a rare filter reads much of the tenant.
 */
export async function firstRecords(
  db: DynamoDBDocumentClient,
  table: string,
  tenantId: string,
  read: Omit<ShardRead, 'pageSize'>,
  limit: number,
): Promise<StoredRecord[]> {
  const pageSize = Math.max(4, Math.ceil((2 * limit) / RECORD_SHARDS));
  const shards = shardKeys(tenantId).map((pk) => ({
    pages: shardRecords(db, table, pk, { ...read, pageSize }),
    buffer: [] as StoredRecord[],
    done: false,
  }));
  type Shard = (typeof shards)[number];
  // A partition that is not done always has a record buffered, so the merge can compare them all.
  const fill = async (shard: Shard) => {
    while (shard.buffer.length === 0 && !shard.done) {
      const next = await shard.pages.next();
      if (next.done) shard.done = true;
      else shard.buffer.push(...next.value);
    }
  };
  const first = (a: StoredRecord, b: StoredRecord) => (read.order === 'asc' ? positionBefore(a, b) : positionBefore(b, a));
  await Promise.all(shards.map(fill));
  const out: StoredRecord[] = [];
  try {
    while (out.length < limit) {
      let best: Shard | undefined;
      for (const shard of shards) if (shard.buffer.length > 0 && (!best || first(shard.buffer[0]!, best.buffer[0]!))) best = shard;
      if (!best) break;
      out.push(best.buffer.shift()!);
      await fill(best);
    }
  } finally {
    await Promise.all(shards.map((shard) => shard.pages.return(undefined)));
  }
  return out;
}
