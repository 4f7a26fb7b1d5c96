import type { API, Client, Types } from '@opensearch-project/opensearch';
import { searchableText } from '../../../domain/query-parse.js';
import { deserializeRecord, serializeRecord, type SerializedRecord, type StoredRecord } from '../../../domain/record.js';
import { RANKING } from '../../../domain/rank.js';
import { RECORDS_ANALYZER, recordsAnalysis } from './analysis.js';

/**
 * What a record looks like in OpenSearch: the index template (settings and mapping) and the document
 * written for each record, and back.
 *
 * Two copies of the text live in a document, on purpose. The analyzed `title` and `body` hold the
 * searchable form (Unicode NFKC, `searchableText`), because OpenSearch has no NFKC normalizer without
 * the ICU plugin, and the parser applies NFKC to the query: this is how "ﬁle" and "file" match each
 * other, as they do on SQLite. The exact record, as stored, is kept in `record`, which is not indexed
 * at all, and search results are read from it only.
 */

/**
 * Bumped whenever the template changes, so operators can see which version a cluster holds, and so a
 * deploy puts the new template (the custom resource runs again when this number changes). The template
 * only shapes indices created after it: an existing index keeps its settings until it is reindexed
 * (docs/opensearch.md, "Ranking on OpenSearch").
 *
 * 2: title and body rank with the `memory_bm25` similarity, whose k1 and b are RANKING's. A change to
 * RANKING.k1 or RANKING.b changes the template too; the stack passes them to the custom resource beside
 * this number, so a deploy puts the template again either way.
 * 3: `version`, `updated_at` and `superseded_by` (RECORD_FIELDS_SINCE_3), which the deploy also adds to the
 * indices behind the alias, since new fields can be added to an open index (ensureRecordsIndex).
 * 4: title and body analyzed by RECORDS_ANALYZER (analysis.ts), the embedded engine's rules (clitics dropped,
 * identifiers whole and in words, no stop words), where `english` was. Unlike 3, this needs a reindex into a
 * new index behind the alias (docs/opensearch.md, "A new analyzer"): an index keeps the analyzer it was made with.
 */
export const RECORDS_TEMPLATE_VERSION = 4;

/**
 * The fields template version 3 added. Adding a field to an existing index needs no reindex, so the deploy
 * puts these on every index behind the alias before the indexer writes documents that carry them (the
 * mapping is strict, so it would refuse them); a document from before lacks them, which reads as version
 * 1, never updated, not superseded.
 */
export const RECORD_FIELDS_SINCE_3 = {
  version: { type: 'long' },
  updated_at: { type: 'date', format: 'strict_date_optional_time' },
  superseded_by: { type: 'keyword' },
} as const satisfies Record<string, Types.Common_Mapping.Property>;

/**
 * The name of the BM25 similarity the title and body fields rank with, defined in the index settings
 * with the k1 and b of the embedded engine (RANKING).
 */
export const RECORDS_SIMILARITY = 'memory_bm25';

/**
 * The similarity's definition. On OpenSearch 2.x, the domain's engine, type `BM25` is Lucene's
 * LegacyBM25Similarity: idf · tf · (k1 + 1) / (tf + k1 · (1 − b + b · dl / avgdl)), with the (k1 + 1)
 * factor the embedded engine has too, so the two score on the same scale. (OpenSearch 3.0 made `BM25`
 * drop that factor and calls the old one `LegacyBM25`; see docs/opensearch.md before upgrading.)
 */
export function recordsSimilarity(): { type: 'BM25'; k1: number; b: number; discount_overlaps: boolean } {
  return { type: 'BM25', k1: RANKING.k1, b: RANKING.b, discount_overlaps: true };
}

/** The exact stored record as the `record` field keeps it: `metadata` is its JSON text. */
export type RecordSource = SerializedRecord;

/** The document indexed for a record: filter and sort fields, NFKC text, and the exact record. */
export type RecordDocument = Omit<StoredRecord, 'metadata'> & { record: RecordSource };

export interface RecordsTemplateOptions {
  /** Primary shards of each new index; 1 unless the index is expected to pass about 30 GB. */
  shards?: number;
  /** Replicas of each shard; 1 so that losing one data node (or one AZ) loses no data and no search. */
  replicas?: number;
}

type IndexTemplateBody = API.Indices_PutIndexTemplate_RequestBody;

/**
 * The composable index template body for the record indices matching `indexPattern`: the title and body
 * analyzed as the embedded engine analyzes them (analysis.ts), both ranked by the `memory_bm25` similarity
 * (RANKING's k1 and b), keywords for
 * the exact-match filters, and nothing else indexed.
 */
export function recordsIndexTemplate(indexPattern: string, options: RecordsTemplateOptions = {}): IndexTemplateBody {
  return {
    index_patterns: [indexPattern],
    // Above the priority 0 of catch-all templates (`*`), which would otherwise overlap and be refused.
    priority: 100,
    version: RECORDS_TEMPLATE_VERSION,
    _meta: { description: 'agent memory records, one document per record, routed by tenant' },
    template: {
      settings: {
        index: {
          // Records are small (the body is at most 64 KiB, most are a few KB), so one shard of the
          // recommended 10 to 30 GB holds millions of them. A search goes only to its tenant's shard
          // (routing), so more shards add overhead, not speed, until one shard grows too big.
          number_of_shards: options.shards ?? 1,
          number_of_replicas: options.replicas ?? 1,
          // The client's type names a few fixed keys here; OpenSearch takes any name for a similarity.
          similarity: { [RECORDS_SIMILARITY]: recordsSimilarity() } as unknown as Types.Indices_Common.IndexSettingsSimilarity,
          analysis: recordsAnalysis() as unknown as Types.Indices_Common.IndexSettingsAnalysis,
        },
      },
      mappings: {
        // A field the code does not know fails the write instead of growing the mapping in silence.
        dynamic: 'strict',
        // Every document is written with its tenant as routing; one written without it is refused.
        _routing: { required: true },
        properties: {
          // One mapping for each field of the document and no more (the `satisfies` below): a field the record gains is mapped here.
          id: { type: 'keyword' },
          tenant_id: { type: 'keyword' },
          agent_id: { type: 'keyword' },
          type: { type: 'keyword' },
          client: { type: 'keyword' },
          created_at: { type: 'date', format: 'strict_date_optional_time' },
          // Both text fields rank with RANKING's k1 and b; the title's weight is applied by the query.
          title: { type: 'text', analyzer: RECORDS_ANALYZER, similarity: RECORDS_SIMILARITY },
          body: { type: 'text', analyzer: RECORDS_ANALYZER, similarity: RECORDS_SIMILARITY },
          classification: {
            type: 'object',
            properties: {
              type: { type: 'keyword' },
              confidence: { type: 'float' },
              model: { type: 'keyword' },
              classified_at: { type: 'date', format: 'strict_date_optional_time' },
            },
          },
          // Search leaves out a record whose superseded_by is set (null is not indexed, so it does not exist).
          ...RECORD_FIELDS_SINCE_3,
          // The exact record, metadata included, stored in _source and never parsed into fields: metadata
          // is never searched, and its keys can be anything a caller sends.
          record: { type: 'object', enabled: false },
        } satisfies Record<keyof RecordDocument, Types.Common_Mapping.Property>,
      },
    },
  };
}

/** Creates or replaces the records index template; it applies to indices created afterwards. */
export async function putRecordsIndexTemplate(
  client: Client,
  template: { name: string; indexPattern: string } & RecordsTemplateOptions,
): Promise<void> {
  const { name, indexPattern, ...options } = template;
  await client.indices.putIndexTemplate({ name, body: recordsIndexTemplate(indexPattern, options) });
}

/**
 * Puts the records index template for `<alias>-*`, then creates `firstIndex` with `alias` as its write
 * alias unless the alias exists already, in which case it adds the fields of RECORD_FIELDS_SINCE_3 to the
 * indices behind it (a no-op once they have them); true when it created the index. Idempotent.
 */
export async function ensureRecordsIndex(client: Client, alias: string, firstIndex: string): Promise<boolean> {
  await putRecordsIndexTemplate(client, { name: alias, indexPattern: `${alias}-*` });
  const { body: exists } = await client.indices.existsAlias({ name: alias });
  if (!exists) await client.indices.create({ index: firstIndex, body: { aliases: { [alias]: { is_write_index: true } } } });
  else await client.indices.putMapping({ index: alias, body: { properties: RECORD_FIELDS_SINCE_3 } });
  return !exists;
}

/**
 * A record's document `_id`: its tenant and its id. Ids are unique per tenant (an export imported into
 * another tenant keeps them), so the id alone could name two tenants' records, and one would overwrite the
 * other whenever routing put both tenants on the same shard. Documents indexed before this scheme have the
 * id alone, and a reindex gives them this one (docs/opensearch.md, "Document ids").
 */
export const documentId = (tenantId: string, id: string): string => `${tenantId}:${id}`;

/** The document to index for a stored record. */
export function recordDocument(record: StoredRecord): RecordDocument {
  return {
    id: record.id,
    tenant_id: record.tenant_id,
    agent_id: record.agent_id,
    type: record.type,
    client: record.client,
    created_at: record.created_at,
    title: searchableText(record.title),
    body: searchableText(record.body),
    classification: record.classification,
    version: record.version,
    updated_at: record.updated_at,
    superseded_by: record.superseded_by,
    // As JSON text, as the DynamoDB item keeps it: any JSON object round-trips exactly, however deep
    // (OpenSearch's parser limits nesting) and whatever its keys (the client refuses a response that has a
    // `__proto__` key, which metadata is free to have).
    record: serializeRecord(record),
  };
}

/** The stored record kept in a document's `_source`, exactly as it was written. */
export function recordFromSource(source: unknown): StoredRecord {
  const record = (source as { record?: RecordSource } | null | undefined)?.record;
  if (record === undefined || record === null || typeof record !== 'object') {
    throw new Error('an OpenSearch hit has no record in its _source');
  }
  // A document written before records had versions holds a record without one: version 1.
  return deserializeRecord({ ...record, version: record.version ?? 1 });
}
