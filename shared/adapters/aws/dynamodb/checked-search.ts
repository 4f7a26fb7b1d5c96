import type { SearchHit } from '../../../domain/record.js';
import type { SearchIndex, SearchQuery } from '../../../ports.js';
import type { DynamoDbRecordStore } from './record-store.js';

/**
 * Search on AWS, with each hit checked against the records table before it is returned. The search index
 * follows the table through its stream, seconds behind at worst, so a record deleted a moment ago can still
 * be a hit; the check (one strongly consistent BatchGetItem, and the tenant's running forget jobs) drops it.
 * When it drops any from a full page, the search runs once more for enough hits to fill the page again.
 */
export class TableCheckedSearch implements SearchIndex {
  constructor(
    private readonly index: SearchIndex,
    private readonly records: Pick<DynamoDbRecordStore, 'readable'>,
  ) {}

  async search(tenantId: string, query: SearchQuery): Promise<SearchHit[]> {
    let hits = await this.index.search(tenantId, query);
    if (hits.length === 0) return hits;
    let readable = await this.records.readable(tenantId, hits);
    const dropped = hits.length - readable.size;
    if (dropped > 0 && hits.length === query.limit) {
      hits = await this.index.search(tenantId, { ...query, limit: query.limit + 2 * dropped + 10 });
      readable = await this.records.readable(tenantId, hits);
    }
    return hits.filter((hit) => readable.has(hit.id)).slice(0, query.limit);
  }
}
