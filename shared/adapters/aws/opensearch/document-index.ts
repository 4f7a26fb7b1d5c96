import { errors, type API, type Client, type Types } from '@opensearch-project/opensearch';
import type { DocumentIndex, IndexChange } from '../../../ports.js';
import { documentId, recordDocument } from './mapping.js';

type BulkItem = Types.Core_Bulk.Item;

/**
 * The write side of the OpenSearch records index, fed by the indexer from the DynamoDB stream. Each
 * record is one document whose `_id` is its tenant and id (`documentId`: ids are unique per tenant, and two
 * tenants may hold the same one after an import) and whose routing is its tenant, so a replayed change
 * overwrites (or deletes) the same document again and leaves the index as it was.
 */
export class OpenSearchDocumentIndex implements DocumentIndex {
  /** `index` is the records index, or an alias with one write index. */
  constructor(
    private readonly client: Client,
    private readonly index: string,
  ) {}

  async apply(changes: IndexChange[]): Promise<(string | null)[]> {
    if (changes.length === 0) return [];
    // One shard holds all of a tenant's documents (routing), and a bulk request applies the actions of
    // one shard in order, so two changes to the same record are applied in the order given.
    const body = changes.flatMap((change): API.Bulk_RequestBody =>
      change.kind === 'upsert'
        ? [{ index: { _id: documentId(change.record.tenant_id, change.record.id), routing: change.record.tenant_id } }, recordDocument(change.record)]
        : [{ delete: { _id: documentId(change.tenant_id, change.id), routing: change.tenant_id } }],
    );
    let items: BulkItem[];
    try {
      items = (await this.client.bulk({ index: this.index, body })).body.items;
    } catch (error) {
      const reason = `bulk request failed: ${describeError(error)}`;
      return changes.map(() => reason);
    }
    return changes.map((_, i) => itemFailure(items[i]));
  }
}

/** Null when a bulk item succeeded (a delete that found nothing included), or why it failed. */
function itemFailure(item: BulkItem | undefined): string | null {
  const result = item?.index ?? item?.delete ?? item?.create ?? item?.update;
  if (result === undefined) return 'the bulk response has no item for this change';
  if (result.error === undefined || result.error === null) {
    // A delete of a document that is not there answers 404 "not_found": the index is as it should be.
    if ((result.status >= 200 && result.status < 300) || (item?.delete !== undefined && result.status === 404)) {
      return null;
    }
    return `${result.status} ${result.result ?? 'unexpected result'}`;
  }
  return `${result.status} ${result.error.type}: ${result.error.reason ?? 'no reason given'}`;
}

/** The status and the error type and reason of a failed request, or the message of any other error. */
function describeError(error: unknown): string {
  if (error instanceof errors.ResponseError) return `${String(error.statusCode)} ${error.message}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
