import { z } from 'zod';
import { RECALL_MIN_RANK } from './descriptions.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../shared/domain/idempotency.js';
import { LIMITS } from '../shared/domain/limits.js';
import {
  classifyInputSchema,
  forgetAcceptedSchema,
  forgetInputSchema,
  forgetResultSchema,
  listQuerySchema,
  recallQuerySchema,
  recordInputSchema,
  recordPageSchema,
  recordPatchSchema,
  recordReceiptSchema,
  recordSchema,
  searchHitSchema,
  suggestionSchema,
  usageSchema,
} from '../shared/domain/schemas.js';

/**
 * The tools' arguments and answers as zod schemas, made from the API's own (shared/domain/schemas.ts): the
 * MCP SDK lists them as JSON Schemas and checks every call and answer against them.
 */

/** How many of the matched records a dry run shows. */
export const FORGET_SAMPLE_SIZE = 5;

/** memory_remember's arguments: the record, plus the Idempotency-Key header as an optional argument. */
export const rememberArgsSchema = z.strictObject({
  ...recordInputSchema.shape,
  idempotency_key: z
    .string()
    .regex(IDEMPOTENCY_KEY_PATTERN, 'must be visible ASCII characters, without spaces')
    .max(LIMITS.idempotencyKeyChars)
    .optional()
    .meta({
      description:
        'Optional. Makes a retry safe: within 24 hours, a second call with the same key and the same record stores nothing ' +
        `new and answers the first receipt; the same key with a different record is an error. 1 to ${LIMITS.idempotencyKeyChars} visible ASCII characters.`,
    }),
});

// New objects from the shapes rather than the exported schemas: those carry an `id`, which would make the
// listed JSON Schema a `$ref`, and MCP wants `"type": "object"` at the root.
export const recallArgsSchema = z.strictObject({
  ...recallQuerySchema.shape,
  min_rank: recallQuerySchema.shape.min_rank.meta({ description: RECALL_MIN_RANK }),
});
// The text alone: the API's agent_id and type are not used, and a tool's schema lists only what matters.
export const classifyArgsSchema = z.strictObject({ title: classifyInputSchema.shape.title, body: classifyInputSchema.shape.body });

export const receiptOutputSchema = z.strictObject(recordReceiptSchema.shape);
export const recallOutputSchema = z.strictObject({
  results: z.array(searchHitSchema).meta({ description: 'The records found, best first (newest first without q).' }),
});
export const suggestionOutputSchema = z.strictObject(suggestionSchema.shape);

export const getArgsSchema = z.strictObject({
  id: recordSchema.shape.id
    .min(1)
    .max(LIMITS.recordIdChars)
    .meta({ description: 'The record id (a UUID), as memory_recall, memory_list or memory_remember answered it.' }),
});
export const listArgsSchema = z.strictObject(listQuerySchema.shape);

/** memory_update's arguments: the record's id, the API's patch, and the If-Match header as if_version. */
export const updateArgsSchema = z.strictObject({
  id: getArgsSchema.shape.id,
  ...recordPatchSchema.shape,
  if_version: z
    .number()
    .int()
    .min(1)
    .optional()
    .meta({
      description:
        'Optional: the version of the record as memory_get showed it. The update then applies only if the record is still at that version; ' +
        'otherwise it is a version_conflict error and nothing changes.',
    }),
});

export const usageArgsSchema = z.strictObject({});
// With the calling key's description (the API's `include=key`): what the agent's key may do.
export const usageOutputSchema = z.strictObject({
  ...usageSchema.shape,
  key: usageSchema.shape.key.unwrap().meta({ description: 'The calling key: its scopes, its agent and its end.' }),
});

/** memory_forget's arguments: the API's selectors, with `confirm` in place of `dry_run`, the other way round. */
const { dry_run: _dryRun, ...forgetSelectors } = forgetInputSchema.shape;
export const forgetArgsSchema = z.strictObject({
  ...forgetSelectors,
  confirm: z
    .boolean()
    .optional()
    .meta({
      description:
        'true: delete the matching records. Absent or false: a dry run that deletes nothing and says what would go. ' +
        'Set it only after the user has agreed to what the dry run showed.',
    }),
});

export const recordOutputSchema = z.strictObject(recordSchema.shape);
export const listOutputSchema = z.strictObject(recordPageSchema.shape);
export const forgetSampleSchema = recordSchema.pick({ id: true, agent_id: true, type: true, title: true, client: true, created_at: true });
export const forgetOutputSchema = z.strictObject({
  dry_run: z.boolean().meta({ description: 'true when nothing was deleted because confirm was not true.' }),
  matched: forgetResultSchema.shape.matched,
  deleted: forgetResultSchema.shape.deleted.optional().meta({ description: 'How many were deleted: 0 on a dry run; absent while a job deletes them.' }),
  job_id: forgetAcceptedSchema.shape.job_id.optional().meta({ description: 'Set when a large forget runs as a job: its records are hidden from every read already.' }),
  sample: z
    .array(forgetSampleSchema)
    .optional()
    .meta({ description: `On a dry run: up to ${FORGET_SAMPLE_SIZE} of the matched records (when they can be read cheaply), newest first.` }),
});
