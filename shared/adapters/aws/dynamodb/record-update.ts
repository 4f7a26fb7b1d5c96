import type { CancellationReason } from '@aws-sdk/client-dynamodb';
import { UpdateCommand, type DynamoDBDocumentClient, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { AppError } from '../../../domain/errors.js';
import { LIMITS, patchedRecord, serializeRecord, type StoredRecord } from '../../../domain/record.js';
import { PATCH_FIELDS, type RecordPatch } from '../../../domain/schemas.js';
import type { CreateRecordOptions, UpdateRecordOptions } from '../../../ports.js';
import { hiddenBy, type ForgetJobs } from './forget-jobs.js';
import { recordFromItem, recordKey } from './record-item.js';
import { conditionFailed, throttled } from './transact.js';

/**
 * Updates and supersedes on DynamoDB. An update is one conditional UpdateItem; a supersede is one Update
 * per named record inside the write's own TransactWriteItems. Either way the table's stream carries the
 * change (a MODIFY) to the search index, and the indexer queues the classification again when the text
 * changed; until the index has caught up, TableCheckedSearch shows hits as the table holds them.
 */

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** The most items one write's transaction holds: the counter, the record, the idempotency key and the records it supersedes. */
export const WRITE_TRANSACTION_ITEMS = 3 + LIMITS.supersedesMax;

/** How often an update whose version check lost to a concurrent update is tried again. */
const UPDATE_ATTEMPTS = 8;

/** What an update needs of the store: the table, its client, the strongly consistent read and the forget jobs. */
export interface UpdateContext {
  db: DynamoDBDocumentClient;
  table: string;
  jobs: Pick<ForgetJobs, 'running'>;
  stored(tenantId: string, id: string): Promise<StoredRecord | null>;
}

/**
 * The update of RecordStore.update: the record is read (strongly consistent) with the tenant's running forget
 * jobs, so that a record GET would not return is not updated; then one UpdateItem sets the patched fields,
 * `updated_at` and one version more (`if_not_exists(version, 1) + 1`: an item from before versions is
 * version 1). Its condition is that the record is still the tenant's, and besides:
 *
 * - with `If-Match`, that its version is still the one read (which If-Match named);
 * - while a forget job runs, that its type and client are still those read, the fields an update can change
 *   that a job's selectors look at (agent, id and creation time never change), so no update brings back,
 *   or hides, a record other than the one checked.
 *
 * A record another update changed in between is read again: with If-Match it is then 412 unless its new
 * version is also named. Without either condition, concurrent updates all apply, each counted, and the
 * last one wins.
 */
export async function updateRecord(
  ctx: UpdateContext,
  tenantId: string,
  id: string,
  patch: RecordPatch,
  { ifVersions, at }: UpdateRecordOptions,
): Promise<StoredRecord | null> {
  for (let attempt = 1; attempt <= UPDATE_ATTEMPTS; attempt++) {
    if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(200, 10 * 2 ** attempt)));
    const [current, running] = await Promise.all([ctx.stored(tenantId, id), ctx.jobs.running(tenantId)]);
    if (!current || hiddenBy(running)(current)) return null;
    if (ifVersions && !ifVersions.includes(current.version)) throw versionConflict(current.version);
    const next = serializeRecord(patchedRecord(current, patch, at));
    const names: Record<string, string> = { '#version': 'version', '#updated_at': 'updated_at', '#tenant': 'tenant_id' };
    const values: Record<string, unknown> = { ':one': 1, ':at': next.updated_at, ':tenant': tenantId };
    const sets = ['#version = if_not_exists(#version, :one) + :one', '#updated_at = :at'];
    for (const field of PATCH_FIELDS) {
      if (patch[field] === undefined) continue;
      names[`#${field}`] = field;
      values[`:${field}`] = next[field];
      sets.push(`#${field} = :${field}`);
    }
    const conditions = ['attribute_exists(pk)', '#tenant = :tenant'];
    if (ifVersions) {
      values[':read'] = current.version;
      // An item written before versions has none, and is version 1.
      conditions.push(current.version === 1 ? '(#version = :read OR attribute_not_exists(#version))' : '#version = :read');
    }
    if (running.length > 0) {
      Object.assign(names, { '#type': 'type', '#client': 'client' });
      Object.assign(values, { ':readType': current.type, ':readClient': current.client });
      conditions.push('#type = :readType', '#client = :readClient');
    }
    try {
      const { Attributes } = await ctx.db.send(
        new UpdateCommand({
          TableName: ctx.table,
          Key: recordKey(tenantId, id),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      return recordFromItem(Attributes!);
    } catch (error) {
      if (!conditionFailed(error)) throw throttled(error) ?? error;
      // With no condition but the tenant's, only a record that is gone fails it; otherwise the next read tells
      // a record that is gone (null) from one another update changed (412, or one more attempt).
      if (conditions.length === 2) return null;
    }
  }
  throw new AppError('rate_limited', 'Too many concurrent updates of this record; retry shortly', 1);
}

/** The 412 of an If-Match that names another version than the record has. */
function versionConflict(version: number): AppError {
  return new AppError('version_conflict', `The record is at version ${version} (ETag "${version}"), not one If-Match names; nothing changed`);
}

/**
 * The transaction items that mark each superseded record with the new record's id: an Update whose condition
 * is that the record exists, is the tenant's, and with an agent, is that agent's. A record that fails it
 * cancels the whole write (supersededFailure says which).
 */
export function supersedeItems(table: string, tenantId: string, newId: string, supersedes: NonNullable<CreateRecordOptions['supersedes']>): TransactItem[] {
  const { ids, agentId } = supersedes;
  return ids.map((id) => ({
    Update: {
      TableName: table,
      Key: recordKey(tenantId, id),
      UpdateExpression: 'SET superseded_by = :by',
      ConditionExpression: `attribute_exists(pk) AND tenant_id = :tenant${agentId === null ? '' : ' AND agent_id = :agent'}`,
      ExpressionAttributeValues: { ':by': newId, ':tenant': tenantId, ...(agentId === null ? {} : { ':agent': agentId }) },
    },
  }));
}

/**
 * Throws the 404 of the first named record a running forget job hides: a condition cannot read the jobs, so
 * while one runs the records are read (`fetch`) and checked before the write. Without one (nearly always),
 * this is one Query.
 */
export async function supersedable(
  jobs: Pick<ForgetJobs, 'running'>,
  fetch: (ids: readonly string[]) => Promise<StoredRecord[]>,
  tenantId: string,
  ids: readonly string[],
): Promise<void> {
  const running = await jobs.running(tenantId);
  if (running.length === 0) return;
  const hidden = hiddenBy(running);
  const gone = new Set((await fetch(ids)).filter(hidden).map((r) => r.id));
  const first = ids.find((id) => gone.has(id));
  if (first !== undefined) throw notSuperseded(first);
}

/** The first superseded id whose condition cancelled the write, given the reasons of the supersede items, in order. */
export function supersededFailure(ids: readonly string[], reasons: readonly CancellationReason[]): string | undefined {
  return ids.find((_, i) => reasons[i]?.Code === 'ConditionalCheckFailed');
}

/** The 404 that names a record a write cannot supersede: unknown, deleted, hidden by a forget job, or another agent's. */
export function notSuperseded(id: string): AppError {
  return new AppError('not_found', `No record with id ${id}`);
}
