import { errors, type Client } from '@opensearch-project/opensearch';
import { AppError } from '../../../domain/errors.js';
import { rankFromScore } from '../../../domain/rank.js';
import { LIMITS, type SearchHit } from '../../../domain/record.js';
import type { SearchIndex, SearchQuery } from '../../../ports.js';
import { recordFromSource } from './mapping.js';
import { bestScoreFrom, bestScoreRequest } from './best-score.js';
import { buildSearchRequest } from './query.js';

/**
 * Search on the OpenSearch records index, which follows the table through the DynamoDB stream. Results
 * are the exact stored records, with the rank derived from `_score` as on SQLite: divided by the most the
 * query could score (best-score.ts), asked beside the search. Hits ranked below `min_rank` are left out.
 * A search gets one request (and the bound's, at the same time), with no retry, and fails with 503 `search_timeout` when the cluster has not
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
    const timedOut = (error: unknown) => {
      if (!(error instanceof errors.TimeoutError)) throw error;
      throw new AppError('search_timeout', `The search did not finish within ${timeoutMs / 1000} s; try again in a moment`, 1);
    };
    const options = { requestTimeout: timeoutMs, maxRetries: 0 };
    const text = query.text;
    // The bound the ranks divide by is asked beside the search, not after it, so it adds no round trip.
    const [response, best] = await Promise.all([
      this.client.search({ index: this.index, routing: request.routing, body: request.body }, options).catch(timedOut),
      text === null ? 0 : this.client.mtermvectors(bestScoreRequest(this.index, tenantId, text), options).then((r) => bestScoreFrom(r.body, text), timedOut),
    ]);
    const hits = response.body.hits.hits.map((hit) => {
      const record = recordFromSource(hit._source);
      // The tenant filter already guarantees this; a document whose exact record disagrees with its
      // indexed tenant is corrupt, and failing the search beats showing it to anyone.
      if (record.tenant_id !== tenantId) {
        throw new Error(`OpenSearch document ${String(hit._id)} in ${this.index} holds another tenant's record`);
      }
      return { ...record, rank: text === null ? 0 : rankFromScore(hit._score ?? 0, best) };
    });
    // Sorted by score, so the hits at or above the cut-off are the first ones: the top `limit` of those.
    const minRank = query.min_rank ?? 0;
    return text === null || minRank <= 0 ? hits : hits.filter((hit) => hit.rank >= minRank);
  }
}
