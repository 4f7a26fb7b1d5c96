import type { SearchHit, StoredRecord } from '../../../domain/record.js';
import type { SearchIndex, SearchQuery } from '../../../ports.js';
import { currentHit } from './current-hits.js';

/** What the check reads: the tenant's records with these ids that a GET would return, as the table holds them now. */
export interface ReadableRecords {
  readable(tenantId: string, ids: readonly string[]): Promise<Map<string, StoredRecord>>;
}

/**
 * Search on AWS, with each hit checked against the records table before it is returned. The search index
 * follows the table through its stream, seconds behind at worst, so a hit can be a record deleted, updated or
 * superseded a moment ago; the check (one strongly consistent BatchGetItem, and the tenant's running forget
 * jobs) shows each hit as the table holds it now, or leaves it out (current-hits.ts says when). When it
 * leaves any out of a full page, the search runs once more for enough hits to fill the page again.
 */
export class TableCheckedSearch implements SearchIndex {
  constructor(
    private readonly index: SearchIndex,
    private readonly records: ReadableRecords,
  ) {}

  async search(tenantId: string, query: SearchQuery): Promise<SearchHit[]> {
    let hits = await this.index.search(tenantId, query);
    if (hits.length === 0) return hits;
    let current = await this.checked(tenantId, hits, query);
    const dropped = hits.length - current.length;
    if (dropped > 0 && hits.length === query.limit) {
      hits = await this.index.search(tenantId, { ...query, limit: query.limit + 2 * dropped + 10 });
      current = await this.checked(tenantId, hits, query);
    }
    return current.slice(0, query.limit);
  }

  private async checked(tenantId: string, hits: readonly SearchHit[], query: SearchQuery): Promise<SearchHit[]> {
    const records = await this.records.readable(tenantId, hits.map((hit) => hit.id));
    return hits.flatMap((hit) => currentHit(hit, records.get(hit.id), query) ?? []);
  }
}
