import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { MemoryClient } from '../sdk/src/index.js';
import { SUGGESTED_MIN_RANK } from '../shared/domain/rank.js';
import { errorBody, type ErrorJson } from './api.js';
import { CLASSIFY, FORGET, GET, INSTRUCTIONS, LIST, RECALL, REMEMBER, UPDATE, USAGE } from './descriptions.js';
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
  updateText,
  usageText,
} from './format.js';
import { sampleOf } from './forget-sample.js';
import {
  classifyArgsSchema,
  forgetArgsSchema,
  forgetOutputSchema,
  getArgsSchema,
  listArgsSchema,
  listOutputSchema,
  recallArgsSchema,
  recallOutputSchema,
  receiptOutputSchema,
  recordOutputSchema,
  rememberArgsSchema,
  suggestionOutputSchema,
  updateArgsSchema,
  usageArgsSchema,
  usageOutputSchema,
} from './tool-schemas.js';

/**
 * The tools, described for the model that chooses among them (descriptions.ts). Their arguments are the
 * API's own zod schemas (shared/domain/schemas.ts): the same fields, limits and descriptions as the HTTP
 * API, checked by the MCP SDK before a call reaches the service.
 */

/** What a model should do after a version_conflict: read the record again before deciding. */
const CONFLICT_HINT =
  'The record was changed since you read it. Read it again with memory_get, then call memory_update with its current version if your change still applies.';

export interface MemoryToolsOptions {
  /** The API's URL, named in the message when it cannot be reached. */
  apiUrl: string;
  /** The server's version, as the client sees it in `initialize`. */
  version?: string;
}

/** Runs one SDK call and turns a failure into a tool error with the API's code, and the hint `hints` has for that code. */
async function answer<T>(
  call: () => Promise<T>,
  apiUrl: string,
  ok: (value: T) => CallToolResult,
  hints: { [code: string]: string } = {},
): Promise<CallToolResult> {
  let value: T;
  try {
    value = await call();
  } catch (error) {
    const body: ErrorJson = errorBody(error, apiUrl);
    return toolError(body, hints[body.error]);
  }
  return ok(value);
}

/** Builds an MCP server whose tools call the memory API through `client`; connect it to any transport. */
export function createMemoryMcpServer(client: MemoryClient, options: MemoryToolsOptions): McpServer {
  const server = new McpServer(
    { name: 'agent-memory', title: 'Agent memory', version: options.version ?? '0.1.0' },
    { instructions: INSTRUCTIONS },
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
    (args, extra) => {
      // The suggested cut-off unless the agent chose one: without it every search that shares a word answers.
      const query = args.min_rank === undefined && args.q !== undefined && args.q.trim() !== '' ? { ...args, min_rank: SUGGESTED_MIN_RANK } : args;
      return answer(
        () => client.recall(query, { signal: extra.signal }),
        options.apiUrl,
        (hits) => ({ content: [{ type: 'text', text: recallText(hits, query) }], structuredContent: { results: hits } }),
      );
    },
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
    'memory_update',
    {
      title: 'Update a record',
      description: UPDATE,
      inputSchema: updateArgsSchema,
      outputSchema: recordOutputSchema,
      // Destructive in the MCP sense (its updates are not only additive): the old text is overwritten, not
      // kept. Idempotent: the same arguments again leave the same fields (only the version counts the repeat,
      // and with if_version the repeat changes nothing).
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ id, if_version, ...patch }, extra) =>
      answer(
        () => client.update(id, patch, { signal: extra.signal, ...(if_version === undefined ? {} : { ifVersion: if_version }) }),
        options.apiUrl,
        (record) => ({ content: [{ type: 'text', text: updateText(record, patch) }], structuredContent: { ...record } }),
        { version_conflict: CONFLICT_HINT },
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
        () => client.usage({ include: 'key' }, { signal: extra.signal }),
        options.apiUrl,
        (usage) => ({ content: [{ type: 'text', text: usageText(usage) }], structuredContent: { ...usage } }),
      ),
  );

  return server;
}
