import { z } from 'zod';
import { ERROR_STATUS, type ErrorCode } from './errors.js';
import { jsonValueProblem } from './json-value.js';
import { LIMITS, SEARCH_LIMIT_RANGE } from './limits.js';
import { RANKING, SUGGESTED_MIN_RANK } from './rank.js';
import { classificationSchema, RECORD_TYPES, recordSchema, scoreSchema as score, searchHitSchema, timestampSchema as timestamp } from './record-schema.js';
import { SCOPES } from './tenant.js';
import { DATE_FORMS, parseSince } from './since.js';
import { codePoints, isBlank, malformedTextProblem, utf8Bytes } from './text.js';

/**
 * The zod schemas of the API: the single source of validation, and of everything derived from the API:
 * the OpenAPI document (docs/openapi.json), the SDK's types and the MCP tools' input schemas. Each
 * refinement that maps to a specific error code carries it in `params.code`; validation.ts turns zod
 * issues into AppErrors with those codes. Limits that a refinement checks are repeated in `meta` (as
 * JSON Schema keywords) so that the derived schemas state them too; descriptions are written for both a
 * developer and a model choosing what to send.
 */

/** A string that can be stored and read back unchanged: well-formed Unicode (text.ts says why). */
const wellFormedText = () =>
  z.string().check((ctx) => {
    const problem = malformedTextProblem(ctx.value);
    if (problem !== null) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value, continue: false });
  });

const nonBlank = (s: string) => !isBlank(s);

/** A required, non-blank string of at most `maxChars` code points. */
const requiredText = (maxChars: number) =>
  wellFormedText()
    .refine(nonBlank, { message: 'must not be blank', abort: true })
    .refine((s) => codePoints(s) <= maxChars, { message: `must be at most ${maxChars} characters` })
    .meta({ minLength: 1, maxLength: maxChars, pattern: '\\S' });

const bodyText = wellFormedText()
  .refine(nonBlank, { message: 'must not be blank', abort: true })
  .refine((s) => utf8Bytes(s) <= LIMITS.bodyBytes, {
    params: { code: 'body_too_large' },
    message: `must be at most ${LIMITS.bodyBytes} bytes in UTF-8`,
  })
  .meta({ minLength: 1, pattern: '\\S' });

const optionalTag = (maxChars: number) =>
  wellFormedText()
    .refine((s) => codePoints(s) <= maxChars, { message: `must be at most ${maxChars} characters` })
    .meta({ maxLength: maxChars })
    .nullish();

/**
 * A JSON object (not an array, not a scalar) of at most 16 KiB once serialized and at most 32 levels
 * deep, that every store and serializer gives back as sent (json-value.ts). The raw value is checked
 * before zod copies it, since zod's copy drops a `__proto__` key; a problem there stops the pipe, so
 * the size check below never serializes a value that is too deep.
 */
const metadata = z
  .preprocess(
    (value, ctx) => {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
      const problem = jsonValueProblem(value, LIMITS.metadataDepth);
      if (problem !== null) ctx.addIssue({ code: 'custom', message: problem.message, input: value });
      return value;
    },
    z.record(z.string(), z.unknown()).refine((m) => utf8Bytes(JSON.stringify(m)) <= LIMITS.metadataBytes, {
      message: `must be at most ${LIMITS.metadataBytes} bytes once serialized`,
    }),
  )
  .nullish();

/** What each type is for, in the words a model reads when it picks one. */
export const RECORD_TYPE_DESCRIPTIONS = {
  fact: 'what is true about the user, their setup or their world: preferences and context ("The user prefers dark mode")',
  decision: 'a choice that was made, ideally with its reason ("We chose PostgreSQL over MongoDB for billing")',
  exchange: 'a conversation turn: what was asked or said, and what was answered',
  deliverable: 'something produced and handed over: a report, a draft, code, a plan',
  open_item: 'a follow-up still to do: pending, blocked or promised ("Send Acme the revised quote by Friday")',
  signal: 'a behavioural indicator: a pattern in what someone does or feels, and what it may mean',
} as const satisfies Record<(typeof RECORD_TYPES)[number], string>;

const TYPE_LIST = RECORD_TYPES.map((t) => `${t}: ${RECORD_TYPE_DESCRIPTIONS[t]}`).join('; ');

export const recordTypeSchema = z.enum(RECORD_TYPES).meta({ description: `The kind of record. ${TYPE_LIST}.` });

const titleDescription =
  'A short statement of what the record says, in plain English, with the words someone would search for. ' +
  `The title is the main search signal: a match in the title weighs ${RANKING.titleWeight} times a match in the body.`;

/** A record id a caller names: a string of at most LIMITS.recordIdChars characters. */
const namedRecordId = z.string({ error: 'must be an array of record ids (strings)' }).max(LIMITS.recordIdChars, { error: `must be record ids, of at most ${LIMITS.recordIdChars} characters` });

/** Body of `POST /api/v1/record`. Unknown fields are rejected, so a misspelt field is never dropped. */
export const recordInputSchema = z
  .strictObject({
    agent_id: requiredText(LIMITS.agentIdChars).meta({ description: 'Which agent writes the record (e.g. "support-bot"); searches can filter on it.' }),
    type: recordTypeSchema,
    title: requiredText(LIMITS.titleChars).meta({ description: `${titleDescription} At most ${LIMITS.titleChars} characters.` }),
    body: bodyText.meta({ description: `The details: context, reasons, names, numbers. Searched too. At most ${LIMITS.bodyBytes} bytes in UTF-8.` }),
    client: optionalTag(LIMITS.clientChars).meta({ description: 'Optional: the customer, project or user the record is about; searches can filter on it.' }),
    metadata: metadata.meta({
      description:
        `Optional JSON object kept with the record and returned with it, never searched. At most ${LIMITS.metadataBytes} bytes once serialized ` +
        `and ${LIMITS.metadataDepth} levels deep; numbers are IEEE 754 doubles (send larger integers as strings).`,
    }),
    supersedes: z
      .array(namedRecordId, { error: 'must be an array of record ids' })
      .max(LIMITS.supersedesMax, { error: `must hold at most ${LIMITS.supersedesMax} ids` })
      .optional()
      .meta({
        description:
          `Optional: the ids of at most ${LIMITS.supersedesMax} records this one replaces (the tenant's, and for a key bound to an agent, that agent's). ` +
          'They get superseded_by set to the new id in the same atomic step, and search and listing leave them out from then on ' +
          '(unless include_superseded=true). An id that names no such record is 404 not_found, and nothing is stored.',
      }),
  })
  .meta({ id: 'RecordInput', description: 'A record to store.' });

/**
 * Body of `PATCH /api/v1/record/{id}`: any of the fields a write sets but `agent_id` (at least one), with the
 * write's rules and limits; `client: null` and `metadata: null` remove the field. Any other field is refused.
 */
export const recordPatchSchema = z
  .strictObject({
    title: recordInputSchema.shape.title.optional(),
    body: recordInputSchema.shape.body.optional(),
    type: recordTypeSchema.optional(),
    client: recordInputSchema.shape.client.meta({ description: 'The customer, project or user the record is about; null removes it.' }),
    metadata: recordInputSchema.shape.metadata.meta({ description: 'The JSON object kept with the record, replaced whole; null removes it.' }),
  })
  .meta({ id: 'RecordPatch', description: 'The fields to change (at least one); those not sent stay as they are.' });

/** The fields a PATCH may change, in the order a missing one is named. */
export const PATCH_FIELDS = ['title', 'body', 'type', 'client', 'metadata'] as const;

/**
 * Body of `POST /v1/classify`: a title and a body, with the same limits as on write. `agent_id` and `type`
 * are not needed (decisions.md) but may come, as in the record about to be written: checked as on write,
 * then not used. Any other field is refused.
 */
export const classifyInputSchema = z
  .strictObject({
    title: requiredText(LIMITS.titleChars).meta({ description: `The title of the record to be. At most ${LIMITS.titleChars} characters.` }),
    body: bodyText.meta({ description: `Its body. At most ${LIMITS.bodyBytes} bytes in UTF-8.` }),
    agent_id: recordInputSchema.shape.agent_id.optional().meta({ description: 'Optional and not used: the agent of the record to be, checked as on write.' }),
    type: recordTypeSchema.optional().meta({ description: 'Optional and not used: the type the caller has in mind, checked as on write; the answer is the model\'s own.' }),
  })
  .meta({ id: 'ClassifyInput', description: 'A title and a body to suggest a type for.' });

/** A date (`YYYY-MM-DD`, 00:00 UTC) or an ISO 8601 date-time, read as the UTC instant with milliseconds (years 0001 to 9999). */
const instant = () =>
  z.string().transform((s, ctx) => {
    const iso = parseSince(s);
    if (iso === null) {
      ctx.addIssue({ code: 'custom', message: `must be ${DATE_FORMS}` });
      return z.NEVER;
    }
    return iso;
  });

/** `limit` of a search or a listing, as a query string parameter: digits, no more than the largest limit has. */
const limitParam = z
  .string()
  .regex(new RegExp(`^\\d{1,${String(LIMITS.searchLimitMax).length}}$`))
  .transform(Number)
  .pipe(z.number().int().min(LIMITS.searchLimitMin).max(LIMITS.searchLimitMax))
  .optional()
  .transform((n) => n ?? LIMITS.searchLimitDefault);

/** A yes-or-no query string parameter: `true` or `false`, absent being false. */
const flagParam = z
  .enum(['true', 'false'], { error: 'must be true or false' })
  .optional()
  .transform((value) => value === 'true');

const INCLUDE_SUPERSEDED = 'true: superseded records too (those whose superseded_by is set); by default they are left out.';

/** `min_rank` of a search as a query string parameter: a decimal number (an exponent allowed, as clients print small ones) from 0 to 1, absent being 0. */
const minRankParam = z
  .string()
  .regex(/^(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/, { error: 'must be a number from 0 to 1' })
  .transform(Number)
  .pipe(z.number().min(0).max(1))
  .optional()
  .transform((n) => n ?? 0);

const MIN_RANK =
  'Leave out hits ranked below this, a number from 0 to 1 (default 0: none left out), so a search may answer [] when nothing ' +
  `is relevant enough. ${SUGGESTED_MIN_RANK} is the cut-off the judged sets suggest (docs/api.md, "Rank"). ` +
  'Without q every record ranks 0, so any value above 0 answers [].';

const UNTIL = 'Only records created before this date (YYYY-MM-DD, 00:00 UTC) or ISO 8601 date-time (exclusive).';

/** Query string of `GET /api/v1/query`. Parameters the interface does not name are ignored. */
export const searchParamsSchema = z.object({
  q: z.string().optional().meta({
    description:
      'Free text in English, never a query language. Records matching any word or "quoted phrase" are returned, best first; ' +
      `titles weigh ${RANKING.titleWeight} times bodies. Absent or blank: the newest records first.`,
  }),
  agent_id: optionalTag(LIMITS.agentIdChars).meta({ description: 'Only records written by this agent (exact match).' }),
  type: recordTypeSchema.optional().meta({ description: `Only records of this type. ${TYPE_LIST}.` }),
  client: optionalTag(LIMITS.clientChars).meta({ description: 'Only records about this client (exact match).' }),
  limit: limitParam.meta({ description: `How many records to return, ${SEARCH_LIMIT_RANGE}; default ${LIMITS.searchLimitDefault}.` }),
  since: instant().optional().meta({ description: 'Only records created at or after this date (YYYY-MM-DD, 00:00 UTC) or ISO 8601 date-time.' }),
  until: instant().optional().meta({ description: UNTIL }),
  include_superseded: flagParam.meta({ description: INCLUDE_SUPERSEDED }),
  min_rank: minRankParam.meta({ description: MIN_RANK }),
});

/**
 * A search as typed values rather than a query string, for the SDK and the MCP tool: the same fields, limits
 * and descriptions, with `limit` a number. It is sent as the query string `searchParamsSchema` reads.
 */
export const recallQuerySchema = z
  .strictObject({
    q: searchParamsSchema.shape.q,
    agent_id: searchParamsSchema.shape.agent_id,
    type: searchParamsSchema.shape.type,
    client: searchParamsSchema.shape.client,
    since: z.string().optional().meta({ description: searchParamsSchema.shape.since.description }),
    until: z.string().optional().meta({ description: searchParamsSchema.shape.until.description }),
    limit: z
      .number()
      .int()
      .min(LIMITS.searchLimitMin)
      .max(LIMITS.searchLimitMax)
      .optional()
      .meta({ description: searchParamsSchema.shape.limit.description }),
    include_superseded: z.boolean().optional().meta({ description: INCLUDE_SUPERSEDED }),
    min_rank: z.number().min(0).max(1).optional().meta({ description: MIN_RANK }),
  })
  .meta({ id: 'RecallQuery', description: 'A search: free text and filters, all optional.' });

/** The order of a listing: by `created_at`, then `id`. */
export const LIST_ORDERS = ['desc', 'asc'] as const;

/**
 * Query string of `GET /api/v1/record`: a listing's filters (as search's), its order and page
 * size, and the cursor of the page before. Parameters the service does not know are ignored, as in search.
 */
export const listParamsSchema = z.object({
  agent_id: searchParamsSchema.shape.agent_id,
  type: searchParamsSchema.shape.type,
  client: searchParamsSchema.shape.client,
  since: searchParamsSchema.shape.since,
  until: searchParamsSchema.shape.until,
  include_superseded: flagParam.meta({ description: INCLUDE_SUPERSEDED }),
  order: z.enum(LIST_ORDERS, { error: 'must be desc or asc' }).optional().meta({ description: 'desc (the default): newest first; asc: oldest first. By created_at, then id.' }),
  limit: limitParam.meta({ description: `Records per page, ${SEARCH_LIMIT_RANGE}; default ${LIMITS.searchLimitDefault}.` }),
  cursor: z.string().optional().meta({
    description:
      'The next_cursor of the page before, as it came: it is opaque and sealed with the service\'s key. It carries the filters ' +
      'and the order: send the same ones again, or none. A cursor with other filters, altered, not made for this tenant, ' +
      'or sealed with a key the service no longer has, is 400 invalid_cursor.',
  }),
});

/** A listing as typed values, for the SDK and the MCP tool, sent as the query string `listParamsSchema` reads. */
export const listQuerySchema = z
  .strictObject({
    agent_id: listParamsSchema.shape.agent_id,
    type: listParamsSchema.shape.type,
    client: listParamsSchema.shape.client,
    since: z.string().optional().meta({ description: listParamsSchema.shape.since.description }),
    until: z.string().optional().meta({ description: listParamsSchema.shape.until.description }),
    include_superseded: z.boolean().optional().meta({ description: INCLUDE_SUPERSEDED }),
    order: listParamsSchema.shape.order,
    limit: z.number().int().min(LIMITS.searchLimitMin).max(LIMITS.searchLimitMax).optional().meta({ description: listParamsSchema.shape.limit.description }),
    cursor: listParamsSchema.shape.cursor,
  })
  .meta({ id: 'ListQuery', description: 'A listing: filters, order, page size and cursor, all optional.' });

/** How many ids one forget may name. */
export const FORGET_IDS_MAX = 1000;

/**
 * Body of `POST /api/v1/forget`: the selectors, every one of which a record must match, and `dry_run`. At
 * least one selector is required: erasing a whole tenant is the operator's `tenant delete`.
 */
export const forgetInputSchema = z
  .strictObject({
    agent_id: requiredText(LIMITS.agentIdChars).optional().meta({ description: 'Only records written by this agent.' }),
    client: requiredText(LIMITS.clientChars).optional().meta({ description: 'Only records about this client.' }),
    type: recordTypeSchema.optional().meta({ description: `Only records of this type. ${TYPE_LIST}.` }),
    before: instant().optional().meta({ description: 'Only records created before this date (YYYY-MM-DD, 00:00 UTC) or ISO 8601 date-time.' }),
    ids: z
      .array(namedRecordId, { error: 'must be an array of record ids' })
      .min(1, { error: `must hold 1 to ${FORGET_IDS_MAX} ids` })
      .max(FORGET_IDS_MAX, { error: `must hold 1 to ${FORGET_IDS_MAX} ids` })
      .optional()
      .meta({ description: `Only the records with these ids: 1 to ${FORGET_IDS_MAX}. Ids that name no record of the tenant match nothing.` }),
    dry_run: z.boolean().optional().meta({ description: 'true: delete nothing, and say how many records would go.' }),
  })
  .meta({ id: 'ForgetInput', description: 'Which records to delete: those that match every selector given (at least one).' });

/** The selectors of a forget, in the order a missing one is named. */
export const FORGET_SELECTORS = ['agent_id', 'client', 'type', 'before', 'ids'] as const;

export type SearchParams = z.output<typeof searchParamsSchema>;
export type ListParams = z.output<typeof listParamsSchema>;
export type ListQuery = z.input<typeof listQuerySchema>;
export type ForgetInput = z.output<typeof forgetInputSchema>;
export type RecallQuery = z.input<typeof recallQuerySchema>;
export type ClassifyInput = z.output<typeof classifyInputSchema>;
export type UsageQuery = z.output<typeof usageQuerySchema>;
export type RecordPatch = z.output<typeof recordPatchSchema>;

// Responses. The handlers build these shapes; the end-to-end tests parse real answers with these schemas
// (strictly), so the schemas, and everything derived from them, cannot drift from what the service sends.
// The record's own (the search hit, the record, the classification) are declared in record-schema.ts.

export { classificationSchema, recordSchema, searchHitSchema };

/** The answer of a write (201). */
export const recordReceiptSchema = z
  .strictObject({
    id: z.string().meta({ description: 'The record id: a UUIDv7 from the same millisecond as created_at.' }),
    created_at: timestamp,
    tenant_id: z.string().meta({ description: 'The tenant the API key belongs to.' }),
  })
  .meta({ id: 'RecordReceipt', description: 'The stored record\'s id and creation time.' });

/** A page of a listing (200). */
export const recordPageSchema = z
  .strictObject({
    records: z.array(recordSchema),
    next_cursor: z.string().nullable().meta({ description: 'Pass it as `cursor` for the next page; null on the last page.' }),
  })
  .meta({ id: 'RecordPage', description: 'One page of records, in the listing\'s order.' });

/** The answer of `DELETE /api/v1/record/{id}` (200). */
export const deletedRecordSchema = z
  .strictObject({ id: z.string(), deleted_at: timestamp })
  .meta({ id: 'DeletedRecord', description: 'The record is gone from every read from now on.' });

const count = z.number().int().min(0);

/** The answer of a forget that finished within the request (200). */
export const forgetResultSchema = z
  .strictObject({
    matched: count.meta({ description: 'How many records matched every selector.' }),
    deleted: count.meta({ description: 'How many were deleted: 0 on a dry run.' }),
    dry_run: z.boolean(),
  })
  .meta({ id: 'ForgetResult', description: 'What a forget matched and deleted.' });

/** The answer of a forget that runs as a job (202). */
export const forgetAcceptedSchema = z
  .strictObject({
    job_id: z.string().meta({ description: 'Follow it at GET /api/v1/forget/{job_id}.' }),
    matched: count.meta({ description: 'How many records matched; they are hidden from every read from this answer on.' }),
  })
  .meta({ id: 'ForgetAccepted', description: 'A forget too large for one request, running as a job.' });

/** The answer of `GET /api/v1/forget/{job_id}` (200). */
export const forgetJobSchema = z
  .strictObject({
    status: z.enum(['running', 'done', 'failed']),
    matched: count,
    deleted: count,
  })
  .meta({ id: 'ForgetJob', description: 'The state of a forget job.' });

const allowance = (what: string) =>
  z
    .strictObject({
      used: count.meta({ description: `${what} counted this month.` }),
      quota: count.meta({ description: `${what} the tenant may make this month.` }),
      remaining: count.meta({ description: 'quota − used, and never below 0.' }),
    })
    .meta({ description: `${what}: used, quota and remaining.` });

/**
 * The query of `GET /api/v1/usage`: the answer is decisions.md's object, field for field, unless the caller
 * asks for the calling key's description too. Other parameters are ignored, as in a search.
 */
export const usageQuerySchema = z
  .object({
    include: z
      .enum(['key'], { error: 'must be key' })
      .optional()
      .meta({ description: 'key: the answer also describes the calling key (`key`: its scopes, agent and end).' }),
  })
  .meta({ id: 'UsageQuery', description: 'What the usage answer includes beyond the usage.' });

/** The answer of `GET /api/v1/usage` (200). */
export const usageSchema = z
  .strictObject({
    tenant_id: z.string(),
    month: z.string().regex(/^\d{4}-\d{2}$/).meta({ description: 'The current month, UTC: YYYY-MM.' }),
    records: allowance('Records written'),
    queries: allowance('Searches answered'),
    rate_limit: z
      .strictObject({
        rate: z.number().positive().meta({ description: 'Requests a second, sustained, for the calling key.' }),
        burst: z.number().int().positive().meta({ description: 'Requests at once, for the calling key.' }),
      })
      .meta({ description: "The calling key's rate limit." }),
    key: z
      .strictObject({
        scopes: z.array(z.enum(SCOPES)).meta({ description: 'What the key may do: read, write, delete.' }),
        agent_id: z.string().nullable().meta({ description: 'The agent the key is bound to, or null.' }),
        expires_at: z.string().nullable().meta({ description: 'When the key stops working (ISO 8601), or null.' }),
      })
      .optional()
      .meta({ description: 'Only with `include=key`: the calling key, its scopes, its agent and its end, so a caller (the console) can show what it may do.' }),
  })
  .meta({ id: 'Usage', description: "The tenant's use of the current month, from the counters that enforce the quotas." });

/** The answer of a search (200): the hits, best first. */
export const searchResultsSchema = z.array(searchHitSchema).meta({ id: 'SearchResults' });

/** The answer of `POST /v1/classify` (200). */
export const suggestionSchema = z
  .strictObject({
    type: z.enum(RECORD_TYPES),
    confidence: score.meta({ description: 'The score of the suggested type. Calibrated; below about 0.5 the model does not know.' }),
    scores: z.strictObject(Object.fromEntries(RECORD_TYPES.map((t) => [t, score])) as Record<(typeof RECORD_TYPES)[number], typeof score>),
    model: z.string().meta({ description: 'The model that answered, e.g. "linear-v3".' }),
  })
  .meta({ id: 'Suggestion', description: 'A suggested type, with a score per type in 0..1 that sum to 1.' });

/** Every error answer: `{"error": <code>, "message": …}`, plus `retry_after` on 429 and `request_id` on 500. */
export const errorBodySchema = z
  .strictObject({
    error: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
    message: z.string(),
    retry_after: z.number().int().min(1).optional().meta({ description: 'On 429 and 503: seconds to wait before retrying (also in Retry-After).' }),
    request_id: z.string().optional().meta({ description: 'On 500: quote it when you report the problem.' }),
  })
  .meta({ id: 'ErrorBody', description: 'An error; the code is one of a closed list (docs/api.md).' });
