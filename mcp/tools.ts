import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { IDEMPOTENCY_KEY_PATTERN } from '../shared/domain/idempotency.js';
import { RANKING } from '../shared/domain/rank.js';
import { LIMITS, SEARCH_LIMIT_RANGE } from '../shared/domain/limits.js';
import { RECORD_TYPES } from '../shared/domain/record-schema.js';
import {
  classifyInputSchema,
  FORGET_IDS_MAX,
  forgetAcceptedSchema,
  forgetInputSchema,
  forgetResultSchema,
  listQuerySchema,
  recallQuerySchema,
  recordInputSchema,
  recordPageSchema,
  recordReceiptSchema,
  recordSchema,
  RECORD_TYPE_DESCRIPTIONS,
  searchHitSchema,
  suggestionSchema,
  usageSchema,
} from '../shared/domain/schemas.js';
import { MemoryApiError, MemoryError, type MemoryClient } from '../sdk/src/index.js';
import { errorBody } from './api.js';
import {
  describeSelectors,
  forgetDoneText,
  forgetPreviewText,
  listText,
  receiptText,
  recallText,
  recordText,
  suggestionText,
  toolError,
  usageText,
  type ForgetSample,
} from './format.js';

/**
 * The tools, described for the model that chooses among them. Their arguments are the API's own zod
 * schemas (shared/domain/schemas.ts): the same fields, limits and descriptions as the HTTP API, checked
 * by the MCP SDK before a call reaches the service.
 */

const TYPES = RECORD_TYPES.map((t) => `- ${t}: ${RECORD_TYPE_DESCRIPTIONS[t]}`).join('\n');

const REMEMBER = `Store something worth remembering across conversations in the long-term memory, as one record.
Use it when you learn a fact about the user or their world, when a decision is made, when a conversation turn matters later, when you hand over a deliverable, when a follow-up is promised or still open, or when you notice a behavioural signal. One idea per record.

Pick the type:
${TYPES}
If unsure, call memory_classify first.

The title is the main search signal (a match in the title weighs ${RANKING.titleWeight} times a match in the body): write a short, self-contained statement with the words someone would search for later, such as "The user prefers dark mode". Put context, reasons, names and numbers in the body.

A call stores a new record each time. To make a retry safe, pass the same idempotency_key: within 24 hours the same key and record store it only once.`;

const RECALL = `Search the long-term memory for records stored earlier, by you or other agents of the same tenant.
Use it before answering when earlier conversations may matter: the user's preferences and context, past decisions, open follow-ups, what was delivered or said.

q is plain English, not a query language: records matching any of its words (stemmed, so "running" finds "runs") or "quoted phrases" come back best first, with a rank from 0 to 1; titles weigh ${RANKING.titleWeight} times bodies. Without q, the newest records come first. Filter by type, agent_id, client or since; limit is ${SEARCH_LIMIT_RANGE} (default ${LIMITS.searchLimitDefault}).

The answer is a numbered list: each record's title, then its type, rank, creation time, agent, client and id, then its body (a very long body is cut in the text, and says so).`;

const CLASSIFY = `Suggest which of the six record types fits a title and a body, before storing them with memory_remember. It stores nothing.
The answer is the suggested type with a calibrated confidence (at about 0.9, about 90 % of suggestions are right) and a score for every type. Below about 0.5 the model does not know: choose the type yourself from its description.`;

const GET = `Read one record of the long-term memory in full, by its id (as memory_recall, memory_list or memory_remember gave it): its title, type, creation time, agent, client and id, then its whole body and its metadata.
An id that is unknown, malformed, deleted or another tenant's answers not_found.`;

const LIST = `List the records of the long-term memory in the order they were written, newest first (order "asc": oldest first), optionally only those of one agent_id, type or client, or created from since (inclusive) until until (exclusive): dates YYYY-MM-DD or ISO 8601 date-times.
Unlike memory_recall it does not search or rank: use it to review what is stored, for example before memory_forget. Use memory_recall to find something.

One call answers one page of up to limit records (${SEARCH_LIMIT_RANGE}, default ${LIMITS.searchLimitDefault}). When there are more, the answer ends with a cursor: call memory_list again with the same filters and that cursor for the next page. A cursor with other filters is an invalid_cursor error. Bodies are cut short in the list; memory_get reads one record in full.`;

const FORGET = `Delete records from the long-term memory, for good: every record that matches all the selectors given (at least one of agent_id, client, type, before, ids). before is a date (YYYY-MM-DD) or ISO 8601 date-time: records created before it. ids (from memory_recall or memory_list) name exact records, at most ${FORGET_IDS_MAX}.
Use it when the user asks you to forget something, or to remove records that are wrong or outdated.

Without confirm it is a dry run that deletes nothing: it says how many records match and shows a few of them. Tell the user what would be deleted, and only when they agree call memory_forget again with the same selectors and confirm: true, which deletes them.`;

const USAGE = `Say how much of this month's quotas the tenant has used, and what is left: records stored (memory_remember) and searches (memory_recall), each against its monthly quota, and the rate limit of this API key. Months are UTC; the counts start again with each month. It takes no arguments and counts against neither quota.
Use it when memory_remember or memory_recall was refused with record_quota_exceeded or query_quota_exceeded, before storing or searching a lot, or when the user asks how much memory is left.`;

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
const recallArgsSchema = z.strictObject(recallQuerySchema.shape);
const classifyArgsSchema = z.strictObject(classifyInputSchema.shape);

const receiptOutputSchema = z.strictObject(recordReceiptSchema.shape);
const recallOutputSchema = z.strictObject({
  results: z.array(searchHitSchema).meta({ description: 'The records found, best first (newest first without q).' }),
});
const suggestionOutputSchema = z.strictObject(suggestionSchema.shape);

const getArgsSchema = z.strictObject({
  id: recordSchema.shape.id
    .min(1)
    .max(LIMITS.recordIdChars)
    .meta({ description: 'The record id (a UUID), as memory_recall, memory_list or memory_remember answered it.' }),
});
const listArgsSchema = z.strictObject(listQuerySchema.shape);

const usageArgsSchema = z.strictObject({});
const usageOutputSchema = z.strictObject(usageSchema.shape);

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

/** How many of the matched records a dry run shows. */
export const FORGET_SAMPLE_SIZE = 5;

const recordOutputSchema = z.strictObject(recordSchema.shape);
const listOutputSchema = z.strictObject(recordPageSchema.shape);
const forgetSampleSchema = recordSchema.pick({ id: true, agent_id: true, type: true, title: true, client: true, created_at: true });
const forgetOutputSchema = z.strictObject({
  dry_run: z.boolean().meta({ description: 'true when nothing was deleted because confirm was not true.' }),
  matched: forgetResultSchema.shape.matched,
  deleted: forgetResultSchema.shape.deleted.optional().meta({ description: 'How many were deleted: 0 on a dry run; absent while a job deletes them.' }),
  job_id: forgetAcceptedSchema.shape.job_id.optional().meta({ description: 'Set when a large forget runs as a job: its records are hidden from every read already.' }),
  sample: z
    .array(forgetSampleSchema)
    .optional()
    .meta({ description: `On a dry run: up to ${FORGET_SAMPLE_SIZE} of the matched records (when they can be read cheaply), newest first.` }),
});

export interface MemoryToolsOptions {
  /** The API's URL, named in the message when it cannot be reached. */
  apiUrl: string;
  /** The server's version, as the client sees it in `initialize`. */
  version?: string;
}

/** Runs one SDK call and turns a failure into a tool error with the API's code. */
async function answer<T>(call: () => Promise<T>, apiUrl: string, ok: (value: T) => CallToolResult): Promise<CallToolResult> {
  let value: T;
  try {
    value = await call();
  } catch (error) {
    return toolError(errorBody(error, apiUrl));
  }
  return ok(value);
}

/** Builds an MCP server whose tools call the memory API through `client`; connect it to any transport. */
export function createMemoryMcpServer(client: MemoryClient, options: MemoryToolsOptions): McpServer {
  const server = new McpServer(
    { name: 'agent-memory', title: 'Agent memory', version: options.version ?? '0.1.0' },
    {
      instructions:
        'A long-term memory shared across conversations. Call memory_recall before answering when earlier context may ' +
        'matter, and memory_remember when you learn something worth keeping. Titles are what search finds best. ' +
        'memory_list and memory_get review what is stored; memory_forget deletes records, only after a dry run the user has agreed to. ' +
        "memory_usage says what is left of the month's quotas.",
    },
  );

  server.registerTool(
    'memory_remember',
    {
      title: 'Remember',
      description: REMEMBER,
      inputSchema: rememberArgsSchema,
      outputSchema: receiptOutputSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    ({ idempotency_key, ...record }, extra) =>
      answer(
        () => client.remember(record, { signal: extra.signal, ...(idempotency_key === undefined ? {} : { idempotencyKey: idempotency_key }) }),
        options.apiUrl,
        (receipt) => ({ content: [{ type: 'text', text: receiptText(receipt, record) }], structuredContent: { ...receipt } }),
      ),
  );

  server.registerTool(
    'memory_recall',
    {
      title: 'Recall',
      description: RECALL,
      inputSchema: recallArgsSchema,
      outputSchema: recallOutputSchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (query, extra) =>
      answer(
        () => client.recall(query, { signal: extra.signal }),
        options.apiUrl,
        (hits) => ({ content: [{ type: 'text', text: recallText(hits, query) }], structuredContent: { results: hits } }),
      ),
  );

  server.registerTool(
    'memory_classify',
    {
      title: 'Suggest a type',
      description: CLASSIFY,
      inputSchema: classifyArgsSchema,
      outputSchema: suggestionOutputSchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (input, extra) =>
      answer(
        () => client.classify(input, { signal: extra.signal }),
        options.apiUrl,
        (suggestion) => ({ content: [{ type: 'text', text: suggestionText(suggestion) }], structuredContent: { ...suggestion } }),
      ),
  );

  server.registerTool(
    'memory_get',
    {
      title: 'Read a record',
      description: GET,
      inputSchema: getArgsSchema,
      outputSchema: recordOutputSchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ id }, extra) =>
      answer(
        () => client.get(id, { signal: extra.signal }),
        options.apiUrl,
        (record) => ({ content: [{ type: 'text', text: recordText(record) }], structuredContent: { ...record } }),
      ),
  );

  server.registerTool(
    'memory_list',
    {
      title: 'List records',
      description: LIST,
      inputSchema: listArgsSchema,
      outputSchema: listOutputSchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (query, extra) =>
      answer(
        () => client.listPage(query, { signal: extra.signal }),
        options.apiUrl,
        (page) => ({ content: [{ type: 'text', text: listText(page, query) }], structuredContent: { ...page } }),
      ),
  );

  server.registerTool(
    'memory_forget',
    {
      title: 'Forget records',
      description: FORGET,
      inputSchema: forgetArgsSchema,
      outputSchema: forgetOutputSchema,
      // Destructive; not idempotent, since a second call also takes the matching records written in between.
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    ({ confirm, ...selectors }, extra) => {
      const described = describeSelectors(selectors);
      if (confirm !== true) {
        return answer(
          async () => {
            // A dry run always finishes within the request: only a deleting forget becomes a job.
            const { matched } = await client.forget({ ...selectors, dry_run: true }, { signal: extra.signal });
            return { matched, sample: matched === 0 ? [] : await sampleOf(client, selectors, extra.signal) };
          },
          options.apiUrl,
          ({ matched, sample }) => ({
            content: [{ type: 'text', text: forgetPreviewText(matched, sample ?? [], described) }],
            structuredContent: { dry_run: true, matched, deleted: 0, ...(sample === null ? {} : { sample }) },
          }),
        );
      }
      return answer(
        () => client.forget(selectors, { signal: extra.signal }),
        options.apiUrl,
        (outcome) => ({
          content: [{ type: 'text', text: forgetDoneText(outcome, described) }],
          structuredContent:
            'job_id' in outcome
              ? { dry_run: false, matched: outcome.matched, job_id: outcome.job_id }
              : { dry_run: false, matched: outcome.matched, deleted: outcome.deleted },
        }),
      );
    },
  );

  server.registerTool(
    'memory_usage',
    {
      title: 'Usage this month',
      description: USAGE,
      inputSchema: usageArgsSchema,
      outputSchema: usageOutputSchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (_args, extra) =>
      answer(
        () => client.usage({ signal: extra.signal }),
        options.apiUrl,
        (usage) => ({ content: [{ type: 'text', text: usageText(usage) }], structuredContent: { ...usage } }),
      ),
  );

  return server;
}

type ForgetSelectors = Omit<z.output<typeof forgetArgsSchema>, 'confirm'>;

/**
 * A few of the records a forget matches, newest first, for the dry run to show, when reading them is cheap:
 * one page of a listing with the same filters (`before` is the listing's `until`), or, for `ids`, the
 * first few of them read one by one and checked against the other selectors. Null when they could not be
 * read: the count still stands, so the dry run answers without them.
 */
async function sampleOf(client: MemoryClient, selectors: ForgetSelectors, signal: AbortSignal): Promise<ForgetSample[] | null> {
  const short = ({ id, agent_id, type, title, client: c, created_at }: ForgetSample): ForgetSample => ({ id, agent_id, type, title, client: c, created_at });
  try {
    if (selectors.ids === undefined) {
      const { before, ...filters } = selectors;
      const page = await client.listPage({ ...filters, ...(before === undefined ? {} : { until: before }), limit: FORGET_SAMPLE_SIZE }, { signal });
      return page.records.map(short);
    }
    const read = await Promise.all(
      [...new Set(selectors.ids)].slice(0, FORGET_SAMPLE_SIZE).map((id) =>
        client.get(id, { signal }).catch((error: unknown) => {
          if (error instanceof MemoryApiError && error.code === 'not_found') return null;
          throw error;
        }),
      ),
    );
    const matches = (r: ForgetSample) =>
      (selectors.agent_id === undefined || r.agent_id === selectors.agent_id) &&
      (selectors.client === undefined || r.client === selectors.client) &&
      (selectors.type === undefined || r.type === selectors.type) &&
      (selectors.before === undefined || r.created_at < selectors.before);
    return read
      .filter((r): r is NonNullable<typeof r> => r !== null && matches(r))
      .sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0))
      .map(short);
  } catch (error) {
    if (error instanceof MemoryError) return null;
    throw error;
  }
}
