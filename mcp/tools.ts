import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { IDEMPOTENCY_KEY_PATTERN } from '../shared/domain/idempotency.js';
import { RANKING } from '../shared/domain/rank.js';
import { LIMITS, RECORD_TYPES } from '../shared/domain/record.js';
import {
  classifyInputSchema,
  recallQuerySchema,
  recordInputSchema,
  recordReceiptSchema,
  RECORD_TYPE_DESCRIPTIONS,
  searchHitSchema,
  suggestionSchema,
} from '../shared/domain/schemas.js';
import type { MemoryClient } from '../sdk/src/index.js';
import { errorBody } from './api.js';
import { receiptText, recallText, suggestionText, toolError } from './format.js';

/**
 * The three tools, described for the model that chooses among them. Their arguments are the API's own zod
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

q is plain English, not a query language: records matching any of its words (stemmed, so "running" finds "runs") or "quoted phrases" come back best first, with a rank from 0 to 1; titles weigh ${RANKING.titleWeight} times bodies. Without q, the newest records come first. Filter by type, agent_id, client or since; limit is 1 to 100 (default 20).

The answer is a numbered list: each record's title, then its type, rank, creation time, agent, client and id, then its body (a very long body is cut in the text, and says so).`;

const CLASSIFY = `Suggest which of the six record types fits a title and a body, before storing them with memory_remember. It stores nothing.
The answer is the suggested type with a calibrated confidence (at about 0.9, about 90 % of suggestions are right) and a score for every type. Below about 0.5 the model does not know: choose the type yourself from its description.`;

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
        'matter, and memory_remember when you learn something worth keeping. Titles are what search finds best.',
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

  return server;
}
