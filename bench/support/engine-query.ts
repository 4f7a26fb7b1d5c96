import { parseQuery } from '../../shared/domain/query-parse.js';
import { parseSince } from '../../shared/domain/since.js';
import type { SearchQuery } from '../../shared/ports.js';
import type { BenchQuery } from '../corpus.js';

/** A search of the workload as the engine alone takes it: what the query handler makes of it, limit 20 unless it says. */
export function engineQuery(query: BenchQuery['query']): SearchQuery {
  return {
    text: parseQuery(query.q),
    agent_id: query.agent_id,
    type: query.type,
    client: query.client,
    since: query.since === undefined ? undefined : parseSince(query.since)!,
    limit: query.limit ?? 20,
  };
}
