import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Usage } from '../../../domain/tenant.js';
import type { UsageMeter } from '../../../ports.js';
import { scanAll } from './scan.js';
import { transactWrite } from './transact.js';

interface UsageItem {
  tenant_id: string;
  month: string;
  records?: number;
  queries?: number;
}

const toUsage = (item: UsageItem): Usage => ({
  tenant_id: item.tenant_id,
  month: item.month,
  records: item.records ?? 0,
  queries: item.queries ?? 0,
});

/**
 * The conditional ADD of one to a tenant's monthly counter, `records` or `queries`: its condition is the
 * quota, so the check and the count are one step. A missing counter passes only when the quota allows one
 * at all.
 */
export function countUnderQuota(table: string, tenantId: string, month: string, counter: 'records' | 'queries', quota: number) {
  return {
    TableName: table,
    Key: { tenant_id: tenantId, month },
    UpdateExpression: 'ADD #counter :one',
    ConditionExpression: '(attribute_not_exists(#counter) AND :zero < :quota) OR #counter < :quota',
    ExpressionAttributeNames: { '#counter': counter },
    ExpressionAttributeValues: { ':one': 1, ':zero': 0, ':quota': quota },
  };
}

/**
 * Monthly counters on DynamoDB: one item per tenant and month, shared with the record store's writes.
 * Each count is a conditional ADD whose condition is the quota.
 */
export class DynamoDbUsageMeter implements UsageMeter {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /**
   * The ADD runs as a one-item transaction, not a plain UpdateItem: the SDK's ClientRequestToken makes
   * its retry after a lost response a no-op, where a retried UpdateItem would count the query twice.
   * It costs 2 WCU instead of 1.
   */
  async countQuery(tenantId: string, month: string, queryQuota: number): Promise<boolean> {
    const outcome = await transactWrite(this.db, {
      TransactItems: [
        { Update: countUnderQuota(this.table, tenantId, month, 'queries', queryQuota) },
      ],
    });
    if (outcome.committed) return true;
    if (outcome.reasons[0]?.Code === 'ConditionalCheckFailed') return false;
    throw new Error(`query count cancelled: ${outcome.reasons.map((r) => r.Code ?? 'None').join(', ')}`);
  }

  /** One tenant is a GetItem; all tenants is a scan of the month, for the admin CLI. */
  async list(month: string, tenantId?: string): Promise<Usage[]> {
    if (tenantId !== undefined) {
      const { Item } = await this.db.send(
        new GetCommand({ TableName: this.table, Key: { tenant_id: tenantId, month }, ConsistentRead: true }),
      );
      return Item ? [toUsage(Item as UsageItem)] : [];
    }
    const items = await scanAll<UsageItem>(this.db, {
      TableName: this.table,
      FilterExpression: '#month = :month',
      ExpressionAttributeNames: { '#month': 'month' },
      ExpressionAttributeValues: { ':month': month },
      ConsistentRead: true,
    });
    return items.map(toUsage).sort((a, b) => a.tenant_id.localeCompare(b.tenant_id));
  }
}
