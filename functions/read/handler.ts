import type { Logger } from '@aws-lambda-powertools/logger';
import type { CursorSealer } from '../../shared/domain/cursor-sealer.js';
import { encodeCursor, listRequest } from '../../shared/domain/listing.js';
import { publicRecord, recordIdOf, recordNotFound } from '../../shared/domain/record.js';
import { etagOf } from '../../shared/domain/versions.js';
import { parseListParams } from '../../shared/domain/validation.js';
import { apiFunction } from '../../shared/http/api-route.js';
import { agentFor, mayRead } from '../../shared/http/access.js';
import { principalOf } from '../../shared/http/auth-context.js';
import { jsonResult } from '../../shared/http/responses.js';
import type { RecordStore } from '../../shared/ports.js';

export interface ReadHandlerDeps {
  records: Pick<RecordStore, 'get' | 'list'>;
  /**
   * The sealer of listing cursors, asked for on each listing (never for a read by id). On AWS its key is
   * read from Secrets Manager on the first listing of a cold start, and a failed read throws: a 500.
   */
  cursors: () => CursorSealer | Promise<CursorSealer>;
  logger: Logger;
}

/**
 * `GET /api/v1/record/{id}` (memory_get) and `GET /api/v1/record` (memory_list): the two reads of stored
 * records, in one function because they need the same read-only access and nothing else. Neither counts
 * against a quota.
 */
export function createReadHandler({ records, cursors, logger }: ReadHandlerDeps) {
  return apiFunction(logger, 'read', {
    memory_get: async (event) => {
      const principal = principalOf(event);
      const id = recordIdOf(event.pathParameters?.id ?? '');
      const record = id === null ? null : await records.get(principal.tenantId, id);
      // Another agent's record, to a key bound to an agent, is as unknown as another tenant's.
      if (!record || !mayRead(principal, record)) throw recordNotFound();
      return jsonResult(200, publicRecord(record), { ETag: etagOf(record.version) });
    },
    memory_list: async (event) => {
      const principal = principalOf(event);
      const { tenantId } = principal;
      const params = parseListParams(event.queryStringParameters ?? {});
      const sealer = await cursors();
      const request = listRequest(tenantId, params, sealer);
      // A key bound to an agent lists that agent's records (the cursor keeps the filters as the caller sent them).
      const filters = { ...request.filters, agent_id: agentFor(principal, request.filters.agent_id) };
      // One more than the page: whether there is a next page is known without an empty last page.
      const found = await records.list(tenantId, { ...request, filters, limit: request.limit + 1 });
      const page = found.slice(0, request.limit);
      const last = page.at(-1);
      const next_cursor = found.length > request.limit && last ? encodeCursor(tenantId, request, last, sealer) : null;
      return jsonResult(200, { records: page.map(publicRecord), next_cursor });
    },
  });
}
