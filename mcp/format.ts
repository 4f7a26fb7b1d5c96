import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { RECORD_TYPES, type RecallQuery, type RecordReceipt, type SearchHit, type Suggestion } from '../sdk/src/index.js';
import type { ErrorJson } from './api.js';

/**
 * What a model reads: each tool answers plain text (and, beside it, the same data as `structuredContent`).
 * The text is compact, since it costs context, but complete enough to act on without the structured data,
 * which many clients do not show to the model.
 */

/** A body longer than this many characters is cut in the text; structuredContent always has all of it. */
export const BODY_PREVIEW_CHARS = 2000;
/** The same for metadata, as JSON. */
export const METADATA_PREVIEW_CHARS = 500;

function cut(text: string, max: number): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  return `${chars.slice(0, max).join('')}… [cut: ${chars.length - max} more characters not shown]`;
}

const indent = (text: string) => text.replace(/\n/g, '\n   ');

/** The filters of a search, as a model would have written them. */
function describeQuery(query: RecallQuery): string {
  const parts = [];
  if (query.q !== undefined && query.q.trim() !== '') parts.push(`q=${JSON.stringify(query.q)}`);
  for (const name of ['agent_id', 'type', 'client', 'since', 'limit'] as const) {
    const value = query[name];
    if (value !== undefined && value !== null) parts.push(`${name}=${JSON.stringify(value)}`);
  }
  return parts.length === 0 ? 'no filters' : parts.join(', ');
}

/** The hits of a search as a numbered list, best first: title, then type, rank, date, agent, client, id, then the body. */
export function recallText(hits: SearchHit[], query: RecallQuery): string {
  const byRelevance = query.q !== undefined && query.q.trim() !== '';
  if (hits.length === 0) {
    return (
      `No records found (${describeQuery(query)}). ` +
      (byRelevance ? 'Try other or fewer words, fewer filters, or no q to see the newest records.' : 'Try fewer filters.')
    );
  }
  const order = byRelevance ? 'best match first' : 'newest first';
  const lines = [`${hits.length} record${hits.length === 1 ? '' : 's'} (${describeQuery(query)}; ${order}):`];
  hits.forEach((hit, i) => {
    const facts = [
      `type: ${hit.type}`,
      ...(byRelevance ? [`rank: ${Number(hit.rank.toPrecision(2))}`] : []),
      `created: ${hit.created_at}`,
      `agent: ${hit.agent_id}`,
      ...(hit.client === null ? [] : [`client: ${hit.client}`]),
      `id: ${hit.id}`,
    ];
    lines.push('', `${i + 1}. ${hit.title}`, `   ${facts.join(' | ')}`, `   ${indent(cut(hit.body, BODY_PREVIEW_CHARS))}`);
    if (hit.metadata !== null) lines.push(`   metadata: ${cut(JSON.stringify(hit.metadata), METADATA_PREVIEW_CHARS)}`);
  });
  return lines.join('\n');
}

/** The receipt of a write. */
export function receiptText(receipt: RecordReceipt, record: { type: string; title: string }): string {
  return `Stored the ${record.type} "${record.title}" as record ${receipt.id} (created ${receipt.created_at}).`;
}

/** A type suggestion, with every type's score, highest first. */
export function suggestionText(suggestion: Suggestion): string {
  const scores = [...RECORD_TYPES]
    .sort((a, b) => suggestion.scores[b] - suggestion.scores[a])
    .map((t) => `${t} ${suggestion.scores[t].toFixed(3)}`)
    .join(', ');
  const doubt =
    suggestion.confidence < 0.5
      ? ' The confidence is low: the model does not know, so choose the type from the descriptions yourself.'
      : '';
  return `Suggested type: ${suggestion.type} (confidence ${suggestion.confidence.toFixed(3)}, model ${suggestion.model}).${doubt}\nScores: ${scores}.`;
}

/** The `_meta` key under which an error result carries the error as data. */
export const ERROR_META_KEY = 'agent-memory/error';

/**
 * A tool error a model can read and act on: `isError`, the text `<code>: <message>`, and the same as data
 * under `_meta`. Not as `structuredContent`: a client checks that against the tool's output schema, which
 * describes a success.
 */
export function toolError(body: ErrorJson): CallToolResult {
  const wait = body.retry_after === undefined ? '' : ` (retry after ${body.retry_after} s)`;
  const quote = body.request_id === undefined ? '' : ` (request id ${body.request_id})`;
  return {
    isError: true,
    content: [{ type: 'text', text: `${body.error}: ${body.message}${wait}${quote}` }],
    _meta: { [ERROR_META_KEY]: body },
  };
}
