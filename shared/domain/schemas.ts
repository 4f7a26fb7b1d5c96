import { z } from 'zod';
import { codePoints, LIMITS, RECORD_TYPES, utf8Bytes } from './record.js';
import { parseSince } from './since.js';

/**
 * The zod schemas of the API: the single source of validation. Each refinement that maps to a specific
 * error code carries it in `params.code`; validation.ts turns zod issues into AppErrors with those codes.
 */

const nonBlank = (s: string) => s.trim() !== '';

/** A required, non-blank string of at most `maxChars` code points. */
const requiredText = (maxChars: number) =>
  z
    .string()
    .refine(nonBlank, { message: 'must not be blank', abort: true })
    .refine((s) => codePoints(s) <= maxChars, { message: `must be at most ${maxChars} characters` });

const bodyText = z
  .string()
  .refine(nonBlank, { message: 'must not be blank', abort: true })
  .refine((s) => utf8Bytes(s) <= LIMITS.bodyBytes, {
    params: { code: 'body_too_large' },
    message: `must be at most ${LIMITS.bodyBytes} bytes in UTF-8`,
  });

const optionalTag = (maxChars: number) =>
  z
    .string()
    .refine((s) => codePoints(s) <= maxChars, { message: `must be at most ${maxChars} characters` })
    .nullish();

/** A JSON object (not an array, not a scalar) of at most 16 KiB once serialized. */
const metadata = z
  .record(z.string(), z.unknown())
  .refine((m) => utf8Bytes(JSON.stringify(m)) <= LIMITS.metadataBytes, {
    message: `must be at most ${LIMITS.metadataBytes} bytes once serialized`,
  })
  .nullish();

export const recordTypeSchema = z.enum(RECORD_TYPES);

/** Body of `POST /api/v1/record`. Unknown fields are rejected, so a misspelt field is never dropped. */
export const recordInputSchema = z.strictObject({
  agent_id: requiredText(LIMITS.agentIdChars),
  type: recordTypeSchema,
  title: requiredText(LIMITS.titleChars),
  body: bodyText,
  client: optionalTag(LIMITS.clientChars),
  metadata,
});

/** Body of `POST /v1/classify`: a title and a body, with the same limits as on write. */
export const classifyInputSchema = z.strictObject({
  title: requiredText(LIMITS.titleChars),
  body: bodyText,
});

/** Query string of `GET /api/v1/query`. Parameters the interface does not name are ignored. */
export const searchParamsSchema = z.object({
  q: z.string().optional(),
  agent_id: optionalTag(LIMITS.agentIdChars),
  type: recordTypeSchema.optional(),
  client: optionalTag(LIMITS.clientChars),
  limit: z
    .string()
    .regex(/^\d{1,3}$/)
    .transform(Number)
    .pipe(z.number().int().min(1).max(LIMITS.searchLimitMax))
    .optional()
    .transform((n) => n ?? LIMITS.searchLimitDefault),
  since: z
    .string()
    .transform((s, ctx) => {
      const iso = parseSince(s);
      if (iso === null) {
        ctx.addIssue({ code: 'custom', message: 'must be YYYY-MM-DD or an ISO 8601 date-time' });
        return z.NEVER;
      }
      return iso;
    })
    .optional(),
});

export type SearchParams = z.output<typeof searchParamsSchema>;
export type ClassifyInput = z.output<typeof classifyInputSchema>;
