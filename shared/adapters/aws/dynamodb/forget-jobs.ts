import { GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { StoredRecord } from '../../../domain/record.js';
import type { ForgetJobStatus, ForgetSelectors } from '../../../ports.js';
import { guarded } from './transact.js';

/**
 * Forget jobs on DynamoDB: a forget too large for one request (more than FORGET_SYNC_MAX records) is an
 * item in the tenants table, beside the tenant's keys, and a message to the forget worker:
 *
 *   pk tenant#<tenant_id>  sk forget#<job_id>  status, matched, deleted, the selectors and the cutoff
 *
 * From the moment the item is written (before the 202), every read of the tenant (get, list, export, the
 * check of search hits) reads the tenant's running jobs, one strongly consistent Query, and hides each
 * record a running job matches. The worker deletes them, and the job is done once none is left.
 */
export interface ForgetJobItem extends ForgetJobStatus {
  pk: string;
  sk: string;
  job_id: string;
  tenant_id: string;
  selectors: ForgetSelectors;
  /** Records created before this instant (ISO 8601) and matching the selectors are the job's. */
  cutoff: string;
  created_at: string;
  /** Why the job failed, once it has. */
  error?: string;
}

/** A forget of at most this many records runs within the request; a larger one runs as a job. */
export const FORGET_SYNC_MAX = 1000;

/** Where a new forget job goes: the forget worker's queue (SQS on AWS, the process itself in the AWS-shaped local mode). */
export interface ForgetJobSink {
  start(job: { tenant_id: string; job_id: string }): Promise<void>;
}

const jobKey = (tenantId: string, jobId: string) => ({ pk: `tenant#${tenantId}`, sk: `forget#${jobId}` });

/** True when a record matches every selector and was created before the cutoff. */
export function forgetMatches(record: StoredRecord, selectors: ForgetSelectors, cutoff: string): boolean {
  return (
    record.created_at < cutoff &&
    (selectors.agent_id === undefined || record.agent_id === selectors.agent_id) &&
    (selectors.client === undefined || record.client === selectors.client) &&
    (selectors.type === undefined || record.type === selectors.type) &&
    (selectors.before === undefined || record.created_at < selectors.before) &&
    (selectors.ids === undefined || selectors.ids.includes(record.id))
  );
}

/** The forget jobs of the tenants table. */
export class ForgetJobs {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async create(item: Omit<ForgetJobItem, 'pk' | 'sk'>): Promise<void> {
    await guarded(this.db.send(new PutCommand({ TableName: this.table, Item: { ...jobKey(item.tenant_id, item.job_id), ...item } })));
  }

  async get(tenantId: string, jobId: string): Promise<ForgetJobItem | null> {
    const { Item } = await guarded(this.db.send(new GetCommand({ TableName: this.table, Key: jobKey(tenantId, jobId), ConsistentRead: true })));
    return (Item as ForgetJobItem | undefined) ?? null;
  }

  /** The test that hides what the tenant's running jobs match: one Query, strongly consistent. */
  async hidden(tenantId: string): Promise<(record: StoredRecord) => boolean> {
    const running: ForgetJobItem[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await guarded(
        this.db.send(new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :forget)',
          FilterExpression: '#status = :running',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':pk': `tenant#${tenantId}`, ':forget': 'forget#', ':running': 'running' },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        })),
      );
      running.push(...((page.Items ?? []) as ForgetJobItem[]));
      start = page.LastEvaluatedKey;
    } while (start);
    if (running.length === 0) return () => false;
    return (record) => running.some((job) => forgetMatches(record, job.selectors, job.cutoff));
  }

  /** Adds to the job's count of deleted records. */
  async counted(tenantId: string, jobId: string, deleted: number): Promise<void> {
    if (deleted === 0) return;
    await guarded(
      this.db.send(new UpdateCommand({
        TableName: this.table,
        Key: jobKey(tenantId, jobId),
        UpdateExpression: 'ADD deleted :n',
        ExpressionAttributeValues: { ':n': deleted },
      })),
    );
  }

  /** Ends the job: done, or failed with the reason. */
  async finish(tenantId: string, jobId: string, outcome: { status: 'done' } | { status: 'failed'; error: string }): Promise<void> {
    await guarded(
      this.db.send(new UpdateCommand({
        TableName: this.table,
        Key: jobKey(tenantId, jobId),
        UpdateExpression: outcome.status === 'done' ? 'SET #status = :status' : 'SET #status = :status, #error = :error',
        ExpressionAttributeNames: { '#status': 'status', ...(outcome.status === 'failed' ? { '#error': 'error' } : {}) },
        ExpressionAttributeValues: { ':status': outcome.status, ...(outcome.status === 'failed' ? { ':error': outcome.error } : {}) },
      })),
    );
  }

}
