import { GetCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { StoredRecord } from '../../../domain/record.js';
import type { ForgetJobStatus, ForgetSelectors } from '../../../ports.js';
import { guarded, transactWrite } from './transact.js';

/**
 * Forget jobs on DynamoDB: a forget too large for one request (more than FORGET_SYNC_MAX records) is an
 * item in the tenants table, beside the tenant's keys, and a message to the forget worker:
 *
 *   pk tenant#<tenant_id>  sk forget#<job_id>          status, matched, deleted, the selectors and the cutoff
 *   pk tenant#<tenant_id>  sk forget-running#<job_id>  the selectors and the cutoff, while the job runs
 *
 * From the moment the two items are written, in one transaction before the 202, every read of the tenant
 * (get, list, export, the check of search hits) reads the tenant's running jobs, one strongly consistent
 * Query of the `forget-running#` items, and hides each record a running job matches. The worker deletes
 * them; the job is done once none is left, and its running item goes in the same transaction. So a read
 * costs the jobs that run, not every job the tenant ever ran: the job items themselves stay, for
 * `GET /api/v1/forget/{job_id}`, until DynamoDB TTL removes them FORGET_JOB_RETENTION_DAYS after the end.
 */
export interface ForgetJobItem extends ForgetJobStatus {
  pk: string;
  sk: string;
  job_id: string;
  tenant_id: string;
  selectors: ForgetSelectors;
  /** The forget's start (ISO 8601): records matching the selectors and created before it are the job's (any created_at with ids). */
  cutoff: string;
  created_at: string;
  /** Why the job failed, once it has. */
  error?: string;
  /** Once the job has ended: when DynamoDB TTL removes the item (epoch seconds). */
  ttl?: number;
}

/** A forget of at most this many records runs within the request; a larger one runs as a job. */
export const FORGET_SYNC_MAX = 1000;

/** How long an ended job's status stays readable (`GET /api/v1/forget/{job_id}`) before DynamoDB TTL removes it. */
export const FORGET_JOB_RETENTION_DAYS = 30;

/** Where a new forget job goes: the forget worker's queue (SQS on AWS, the process itself in the AWS-shaped local mode). */
export interface ForgetJobSink {
  start(job: { tenant_id: string; job_id: string }): Promise<void>;
}

const jobKey = (tenantId: string, jobId: string) => ({ pk: `tenant#${tenantId}`, sk: `forget#${jobId}` });
const runningKey = (tenantId: string, jobId: string) => ({ pk: `tenant#${tenantId}`, sk: `forget-running#${jobId}` });

/** What a running job's item holds: enough to hide what it matches. */
type RunningItem = Pick<ForgetJobItem, 'pk' | 'sk' | 'job_id' | 'selectors' | 'cutoff'>;

/** A running forget job, as far as hiding records goes: its selectors and its cutoff. */
export type RunningJob = Pick<ForgetJobItem, 'selectors' | 'cutoff'>;

/** The test that hides what these running jobs match: a record any of them matches is gone for every reader. */
export function hiddenBy(running: readonly RunningJob[]): (record: StoredRecord) => boolean {
  if (running.length === 0) return () => false;
  return (record) => running.some((job) => forgetMatches(record, job.selectors, job.cutoff));
}

/**
 * True when a record matches every selector and, unless the selectors name ids, was created before the
 * cutoff. Named ids are taken whatever their created_at, which an import may set after today.
 */
export function forgetMatches(record: StoredRecord, selectors: ForgetSelectors, cutoff: string): boolean {
  return (
    (selectors.ids !== undefined || record.created_at < cutoff) &&
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
    const running: RunningItem = { ...runningKey(item.tenant_id, item.job_id), job_id: item.job_id, selectors: item.selectors, cutoff: item.cutoff };
    await this.transact([
      { Put: { TableName: this.table, Item: { ...jobKey(item.tenant_id, item.job_id), ...item } } },
      { Put: { TableName: this.table, Item: running } },
    ]);
  }

  async get(tenantId: string, jobId: string): Promise<ForgetJobItem | null> {
    const { Item } = await guarded(this.db.send(new GetCommand({ TableName: this.table, Key: jobKey(tenantId, jobId), ConsistentRead: true })));
    return (Item as ForgetJobItem | undefined) ?? null;
  }

  /** The test that hides what the tenant's running jobs match: one Query of their running items, strongly consistent. */
  async hidden(tenantId: string): Promise<(record: StoredRecord) => boolean> {
    return hiddenBy(await this.running(tenantId));
  }

  /** The tenant's running jobs (their selectors and cutoffs): one strongly consistent Query of their running items. */
  async running(tenantId: string): Promise<RunningJob[]> {
    const running: RunningItem[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await guarded(
        this.db.send(new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :running)',
          ExpressionAttributeValues: { ':pk': `tenant#${tenantId}`, ':running': 'forget-running#' },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        })),
      );
      running.push(...((page.Items ?? []) as RunningItem[]));
      start = page.LastEvaluatedKey;
    } while (start);
    return running;
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

  /**
   * Ends the job: done, or failed with the reason; what it has not deleted is no longer hidden. The job item
   * expires FORGET_JOB_RETENTION_DAYS later (DynamoDB TTL, within a few days of that).
   */
  async finish(tenantId: string, jobId: string, outcome: { status: 'done' } | { status: 'failed'; error: string }, now = new Date()): Promise<void> {
    const ttl = Math.floor(now.getTime() / 1000) + FORGET_JOB_RETENTION_DAYS * 86_400;
    const failed = outcome.status === 'failed';
    await this.transact([
      {
        Update: {
          TableName: this.table,
          Key: jobKey(tenantId, jobId),
          UpdateExpression: failed ? 'SET #status = :status, #ttl = :ttl, #error = :error' : 'SET #status = :status, #ttl = :ttl',
          ExpressionAttributeNames: { '#status': 'status', '#ttl': 'ttl', ...(failed ? { '#error': 'error' } : {}) },
          ExpressionAttributeValues: { ':status': outcome.status, ':ttl': ttl, ...(failed ? { ':error': outcome.error } : {}) },
        },
      },
      { Delete: { TableName: this.table, Key: runningKey(tenantId, jobId) } },
    ]);
  }

  /** Two writes that go together; none of them has a condition, so only a conflict (retried) can cancel it. */
  private async transact(items: NonNullable<Parameters<typeof transactWrite>[1]['TransactItems']>): Promise<void> {
    const outcome = await transactWrite(this.db, { TransactItems: items });
    if (!outcome.committed) throw new Error(`a forget job's transaction was cancelled: ${outcome.reasons.map((r) => r.Code).join(', ')}`);
  }

}
