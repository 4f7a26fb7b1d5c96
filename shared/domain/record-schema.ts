import { z } from 'zod';

/**
 * The record's shape, declared once as zod schemas: the search hit as the API answers it, the record (a hit
 * without `rank`) that get, a listing and an export give, and the stored record (the record and its tenant)
 * that the stores keep. The domain's record types (record.ts), its mappers, the adapters' field and column
 * lists and the OpenAPI components all derive from these.
 */

/** The six record types, in the order the interface lists them. */
export const RECORD_TYPES = ['fact', 'decision', 'exchange', 'deliverable', 'open_item', 'signal'] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

/** An instant as the service writes it. */
export const timestampSchema = z.iso.datetime({ offset: false, precision: 3 }).meta({ description: 'ISO 8601, UTC, milliseconds.' });

/** A score or a confidence in 0..1. */
export const scoreSchema = z.number().min(0).max(1);

/** The type suggested for a stored record by the background worker. */
export const classificationSchema = z
  .strictObject({
    type: z.enum(RECORD_TYPES),
    confidence: scoreSchema.meta({ description: 'Calibrated: suggestions at about 0.9 are right about 90 % of the time.' }),
    model: z.string().meta({ description: 'The model that answered, e.g. "linear-v3".' }),
    classified_at: timestampSchema,
  })
  .meta({ id: 'Classification', description: 'A suggested type; the record\'s own type never changes.' });

/** One search result, its fields in the documented order. */
export const searchHitSchema = z
  .strictObject({
    id: z.string(),
    agent_id: z.string(),
    type: z.enum(RECORD_TYPES),
    title: z.string(),
    body: z.string(),
    client: z.string().nullable(),
    created_at: timestampSchema,
    metadata: z.record(z.string(), z.unknown()).nullable(),
    rank: scoreSchema.meta({ description: 'Relevance in 0..1, best first; 0 when there is no q.' }),
    classification: classificationSchema.nullable().meta({ description: 'null until the background worker has run.' }),
    version: z.number().int().min(1).meta({ description: '1 when the record is created, one more for each update (PATCH). GET sends it as the ETag.' }),
    updated_at: timestampSchema.nullable().meta({ description: 'When the record was last updated; null until its first update.' }),
    superseded_by: z
      .string()
      .nullable()
      .meta({ description: 'The id of the record that supersedes this one, or null while it is current. Search and listing leave superseded records out unless include_superseded=true.' }),
  })
  .meta({ id: 'SearchHit', description: 'A stored record and its relevance.' });

/** A stored record, as `GET /api/v1/record/{id}`, a listing and an export give it: a search hit without `rank`. */
export const recordSchema = searchHitSchema
  .omit({ rank: true })
  .meta({ id: 'Record', description: 'A stored record.' });

const { id, ...recordFields } = recordSchema.shape;

/**
 * A record as the stores keep it: the API's record with its tenant after the id. It is no part of the API
 * (it has no meta id, so it never becomes an OpenAPI component): the tenant comes from the caller's key.
 */
export const storedRecordSchema = z.strictObject({ id, tenant_id: z.string(), ...recordFields });

type Shape = Record<string, z.ZodType>;

/** The field names of an object schema, in its declared order. */
function fieldsOf<S extends Shape>(schema: { shape: S }): readonly (keyof S & string)[] {
  return Object.keys(schema.shape) as (keyof S & string)[];
}

/** The fields of a stored record, in order: the columns and attributes every store writes. */
export const STORED_FIELDS = fieldsOf(storedRecordSchema);
export type StoredField = (typeof STORED_FIELDS)[number];

/** The fields of a record as the API answers it (get, list, export), in the documented order. */
export const RECORD_FIELDS = fieldsOf(recordSchema);

/** The fields of a search result, in the documented order. */
export const SEARCH_HIT_FIELDS = fieldsOf(searchHitSchema);

/** The fields of a classification, in the documented order. */
export const CLASSIFICATION_FIELDS = fieldsOf(classificationSchema);

/** The stored fields that may be null (client, metadata, classification); every other one is always there. */
export const NULLABLE_FIELDS: ReadonlySet<StoredField> = new Set(STORED_FIELDS.filter((field) => storedRecordSchema.shape[field].safeParse(null).success));

/** The stored fields that are never null, in order: a store's item that lacks one is not a record. */
export const REQUIRED_FIELDS = STORED_FIELDS.filter((field) => !NULLABLE_FIELDS.has(field));
