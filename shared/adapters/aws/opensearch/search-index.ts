import { errors, type Client } from '@opensearch-project/opensearch';
import { AppError } from '../../../domain/errors.js';
import { rankFromScore } from '../../../domain/rank.js';
import { LIMITS, type SearchHit } from '../../../domain/record.js';
import type { SearchIndex, SearchQuery } from '../../../ports.js';
import { recordFromSource } from './mapping.js';
import { buildSearchRequest } from './query.js';

/**
 * Search on the OpenSearch records index, which follows the table through the DynamoDB stream. Results
 * are the exact stored records, with the rank derived from `_score` by the same formula as on SQLite.
 * A search gets one request, with no retry, and fails with 503 `search_timeout` when the cluster has not
 * answered within `timeoutMs`: a retry would double the wait past the query Lambda's own timeout.
 */
export class OpenSearchSearchIndex implements SearchIndex {
  /** `index` is the records index, or an alias of it. */
  constructor(
    private readonly client: Client,
    private readonly index: string,
    private readonly options: { timeoutMs: number } = { timeoutMs: LIMITS.searchTimeoutMs },
  ) {}

  async search(tenantId: string, query: SearchQuery): Promise<SearchHit[]> {
    const request = buildSearchRequest(tenantId, query);
    if (request === null) return [];
    const { timeoutMs } = this.options;
    const response = await this.client
      .search({ index: this.index, routing: request.routing, body: request.body }, { requestTimeout: timeoutMs, maxRetries: 0 })
      .catch((error: unknown) => {
        if (!(error instanceof errors.TimeoutError)) throw error;
        throw new AppError('search_timeout', `The search did not finish within ${timeoutMs / 1000} s; try again in a moment`, 1);
      });
    return response.body.hits.hits.map((hit) => {
      const record = recordFromSource(hit._source);
      // The tenant filter already guarantees this; a document whose exact record disagrees with its
      // indexed tenant is corrupt, and failing the search beats showing it to anyone.
      if (record.tenant_id !== tenantId) {
        throw new Error(`OpenSearch document ${String(hit._id)} in ${this.index} holds another tenant's record`);
      }
      return { ...record, rank: query.text === null ? 0 : rankFromScore(hit._score ?? 0) };
    });
  }
}
