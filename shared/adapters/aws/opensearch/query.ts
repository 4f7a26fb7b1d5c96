import type { API, Types } from '@opensearch-project/opensearch';
import { isEmptyQuery } from '../../../domain/query-parse.js';
import type { SearchQuery } from '../../../ports.js';
import { cutsEveryHit, RANKING } from '../../../domain/rank.js';
import { adjacentPairs } from '../../../search/query.js';

type Query = Types.Common_QueryDsl.QueryContainer;

/**
 * How much a title match weighs against a body match: the title weight the embedded engine ranks with.
 * It is applied at query time, so a new RANKING.titleWeight takes effect on the next deploy, with no
 * reindex (k1 and b, in the index settings, are another matter: see mapping.ts).
 */
export const TITLE_BOOST = RANKING.titleWeight;

/** The fields every search reads: the exact record only, never the analyzed copies. */
const SOURCE = ['record'];

/** One search request: its body, and the routing that sends it to the tenant's shard only. */
export interface OpenSearchSearchRequest {
  routing: string;
  body: API.Search_RequestBody;
}

/**
 * Builds the search request for one tenant's query, or null when nothing can be answered, so no request is
 * needed: the query has words to match but none left after parsing (only stop words or punctuation), or it
 * has no text and a `min_rank` above 0, which leaves out every record it would list (they rank 0).
 * The user's words only ever go in as the text of `match` and `match_phrase` queries, which analyze text
 * and read no syntax; nothing reaches a query-string parser.
 */
export function buildSearchRequest(tenantId: string, query: SearchQuery): OpenSearchSearchRequest | null {
  if (cutsEveryHit(query)) return null;
  const filter = filters(tenantId, query);
  const page = { size: query.limit, track_total_hits: false, _source: SOURCE };
  if (query.text === null) {
    return {
      routing: tenantId,
      body: { ...page, query: { bool: { filter } }, sort: [{ created_at: 'desc' }, { id: 'desc' }] },
    };
  }
  if (isEmptyQuery(query.text)) return null;
  return {
    routing: tenantId,
    body: {
      ...page,
      query: { bool: { filter, should: textClauses(query.text.terms, query.text.phrases), minimum_should_match: 1 } },
      // Equal scores are common (the same words in short records), so ties fall back to newest first.
      sort: [{ _score: 'desc' }, { created_at: 'desc' }, { id: 'desc' }],
    },
  };
}

/**
 * The tenant, then each filter the query sets, then (unless include_superseded) current records only; all in
 * filter context, so they never change the score.
 */
function filters(tenantId: string, query: SearchQuery): Query[] {
  const clauses: Query[] = [{ term: { tenant_id: tenantId } }];
  for (const field of ['agent_id', 'type', 'client'] as const) {
    const value = query[field];
    if (value !== undefined && value !== null) clauses.push({ term: { [field]: value } });
  }
  // One range: `since` inclusive, `until` exclusive, as the listing's (shared/domain/listing.ts).
  const range = { ...(query.since === undefined ? {} : { gte: query.since }), ...(query.until === undefined ? {} : { lt: query.until }) };
  if (Object.keys(range).length > 0) clauses.push({ range: { created_at: range } });
  // A null superseded_by is not indexed, so "current" is "has none"; documents from before the field have none either.
  if (query.include_superseded !== true) clauses.push({ bool: { must_not: [{ exists: { field: 'superseded_by' } }] } });
  return clauses;
}

/**
 * Words OR-ed in one `match` per field, each phrase as a `match_phrase` per field, and each two words that
 * follow one another in the query as a `match_phrase` per field boosted by RANKING.proximity (proximity, as
 * the embedded engine ranks it: shared/search/query.ts); the title clauses are also boosted by the title
 * weight. The scores of the clauses that match add up.
 *
 * This is the closest OpenSearch 2.x comes to the embedded engine's BM25F. The embedded engine weighs
 * the title before saturation (tf = w·tfT + tfB in one BM25 term); here each field is a BM25 term of its
 * own, saturated on its own and then weighted (w·bm25(title) + bm25(body)), with each field's own
 * document frequency and average length. `combined_fields`, the BM25F query, only exists from
 * OpenSearch 3.2 on (docs/opensearch.md, "Ranking on OpenSearch").
 */
function textClauses(terms: string[], phrases: string[][]): Query[] {
  const clauses: Query[] = [];
  if (terms.length > 0) {
    const words = terms.join(' ');
    clauses.push({ match: { title: { query: words, boost: TITLE_BOOST } } }, { match: { body: { query: words } } });
  }
  const phraseClauses = (text: string, boost: number): Query[] => [
    { match_phrase: { title: { query: text, boost: TITLE_BOOST * boost } } },
    { match_phrase: { body: { query: text, ...(boost === 1 ? {} : { boost }) } } },
  ];
  for (const phrase of phrases) clauses.push(...phraseClauses(phrase.join(' '), 1));
  if (RANKING.proximity > 0) for (const pair of adjacentPairs(terms)) clauses.push(...phraseClauses(pair.join(' '), RANKING.proximity));
  return clauses;
}
