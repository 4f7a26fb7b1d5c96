import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  RECORD_TYPES,
  type ForgetAccepted,
  type ForgetResult,
  type ListQuery,
  type MemoryRecord,
  type RecallQuery,
  type RecordPage,
  type RecordPatch,
  type RecordReceipt,
  type SearchHit,
  type Suggestion,
  type Usage,
} from '../sdk/src/index.js';
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
/** A listing is for finding records, not reading them: its text cuts bodies shorter (memory_get has all). */
export const LIST_BODY_PREVIEW_CHARS = 300;

function cut(text: string, max: number): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  return `${chars.slice(0, max).join('')}… [cut: ${chars.length - max} more characters not shown]`;
}

const indent = (text: string) => text.replace(/\n/g, '\n   ');

/** The arguments of a call, as a model would have written them: `q="dark mode", limit=5`. */
function describeArgs<T extends object>(args: T, names: readonly (keyof T & string)[]): string {
  const parts = [];
  for (const name of names) {
    const value = args[name];
    if (value === undefined || value === null || (name === 'q' && typeof value === 'string' && value.trim() === '')) continue;
    parts.push(`${name}=${JSON.stringify(value)}`);
  }
  return parts.length === 0 ? 'no filters' : parts.join(', ');
}

/** The filters of a search, as a model would have written them. */
const describeQuery = (query: RecallQuery) => describeArgs(query, ['q', 'agent_id', 'type', 'client', 'since', 'until', 'include_superseded', 'min_rank', 'limit']);

/** The filters of a listing (its cursor is long and says nothing to a reader, so it is left out). */
const describeListing = (query: ListQuery) => describeArgs(query, ['agent_id', 'type', 'client', 'since', 'until', 'include_superseded', 'order', 'limit']);

/**
 * The line of facts under a record's title: type, rank (when there is one), creation time, agent, client,
 * id; then its version and last update (in a list only once it was updated, so that a list of records as
 * written stays short), and the record that superseded it, if one did.
 */
function factsLine(record: MemoryRecord, rank?: number, versionAlways = false): string {
  const facts = [
    `type: ${record.type}`,
    ...(rank === undefined ? [] : [`rank: ${Number(rank.toPrecision(2))}`]),
    `created: ${record.created_at}`,
    `agent: ${record.agent_id}`,
    ...(record.client === null ? [] : [`client: ${record.client}`]),
    `id: ${record.id}`,
    ...(versionAlways || record.version > 1 ? [`version: ${record.version}`] : []),
    ...(record.updated_at === null ? [] : [`updated: ${record.updated_at}`]),
    ...(record.superseded_by === null ? [] : [`superseded by: ${record.superseded_by}`]),
  ];
  return facts.join(' | ');
}

/** One record of a numbered list: title, facts, body (cut at `bodyChars`), metadata. */
function listedRecord(lines: string[], n: number, record: MemoryRecord, bodyChars: number, rank?: number): void {
  lines.push('', `${n}. ${record.title}`, `   ${factsLine(record, rank)}`, `   ${indent(cut(record.body, bodyChars))}`);
  if (record.metadata !== null) lines.push(`   metadata: ${cut(JSON.stringify(record.metadata), METADATA_PREVIEW_CHARS)}`);
}

/** The hits of a search as a numbered list, best first: title, then type, rank, date, agent, client, id, then the body. */
export function recallText(hits: SearchHit[], query: RecallQuery): string {
  const byRelevance = query.q !== undefined && query.q.trim() !== '';
  if (hits.length === 0 && byRelevance && (query.min_rank ?? 0) > 0) {
    return (
      `Nothing relevant found (${describeQuery(query)}): no record ranks at or above min_rank ${query.min_rank}. ` +
      'The memory holds nothing that matches these words well. If it may be stored in other words, search with the words the ' +
      'record itself would contain; min_rank: 0 shows every weaker match.'
    );
  }
  if (hits.length === 0) {
    return (
      `No records found (${describeQuery(query)}). ` +
      (byRelevance ? 'Try other or fewer words, fewer filters, or no q to see the newest records.' : 'Try fewer filters.')
    );
  }
  const order = byRelevance ? 'best match first' : 'newest first';
  const lines = [`${hits.length} record${hits.length === 1 ? '' : 's'} (${describeQuery(query)}; ${order}):`];
  hits.forEach((hit, i) => listedRecord(lines, i + 1, hit, BODY_PREVIEW_CHARS, byRelevance ? hit.rank : undefined));
  return lines.join('\n');
}

/** One record in full, as memory_get answers it: the model asked for this one, so nothing is cut. */
export function recordText(record: MemoryRecord): string {
  const lines = [record.title, factsLine(record, undefined, true), '', record.body];
  if (record.metadata !== null) lines.push('', `metadata: ${JSON.stringify(record.metadata)}`);
  if (record.classification !== null) {
    const c = record.classification;
    lines.push(`suggested type: ${c.type} (confidence ${c.confidence.toFixed(3)}, model ${c.model})`);
  }
  return lines.join('\n');
}

/**
 * A page of a listing as a numbered list, in the listing's order, and how to get the next page: the same
 * call with `cursor`, which the text quotes in full.
 */
export function listText(page: RecordPage, query: ListQuery): string {
  const order = query.order === 'asc' ? 'oldest first' : 'newest first';
  const continued = query.cursor !== undefined;
  if (page.records.length === 0) {
    return continued ? `No more records (${describeListing(query)}).` : `No records found (${describeListing(query)}). Try fewer filters.`;
  }
  const n = page.records.length;
  const lines = [`${n} record${n === 1 ? '' : 's'}${continued ? ' more' : ''} (${describeListing(query)}; ${order}):`];
  page.records.forEach((record, i) => listedRecord(lines, i + 1, record, LIST_BODY_PREVIEW_CHARS));
  lines.push(
    '',
    page.next_cursor === null
      ? 'This is the last page.'
      : `More records: call memory_list again with the same filters and cursor=${JSON.stringify(page.next_cursor)}`,
  );
  return lines.join('\n');
}

/** How many records, in words: "1 record", "3 records". */
const records = (n: number) => `${n} record${n === 1 ? '' : 's'}`;

/** A sample of the records a dry run matched: enough for a person to recognise them. */
export type ForgetSample = Pick<MemoryRecord, 'id' | 'agent_id' | 'type' | 'title' | 'client' | 'created_at'>;

/** What memory_forget would delete: the count, a few of the records, and how to go on. */
export function forgetPreviewText(matched: number, sample: ForgetSample[], selectors: string): string {
  if (matched === 0) return `Nothing to forget: no record matches ${selectors}. Nothing was deleted.`;
  const lines = [`Dry run: ${records(matched)} match${matched === 1 ? 'es' : ''} ${selectors} and would be deleted. Nothing was deleted yet.`];
  if (sample.length > 0) {
    lines.push('', sample.length < matched ? 'Some of them (newest first):' : matched === 1 ? 'The record:' : 'The records:');
    for (const r of sample) {
      lines.push(`- ${r.title} | type: ${r.type} | created: ${r.created_at} | agent: ${r.agent_id}${r.client === null ? '' : ` | client: ${r.client}`} | id: ${r.id}`);
    }
  }
  lines.push(
    '',
    'To delete them, call memory_forget again with the same arguments and confirm: true, once the user has agreed. ' +
      'It deletes what matches then, which can include records written since this dry run.',
  );
  return lines.join('\n');
}

/** What memory_forget deleted, or the job that deletes it. */
export function forgetDoneText(outcome: ForgetResult | ForgetAccepted, selectors: string): string {
  if ('job_id' in outcome) {
    return (
      `Forgetting ${records(outcome.matched)} matching ${selectors}: they are hidden from every read from now on, and ` +
      `deleted in the background (job ${outcome.job_id}).`
    );
  }
  if (outcome.matched === 0) return `Nothing was deleted: no record matches ${selectors}.`;
  const gone = outcome.deleted < outcome.matched ? ` (${outcome.matched} matched; the others were deleted meanwhile by another call)` : '';
  return `Deleted ${records(outcome.deleted)} matching ${selectors}${gone}.`;
}

/** The selectors of a forget, as a model would have written them; a long list of ids is counted instead. */
export function describeSelectors(selectors: { agent_id?: string; client?: string; type?: string; before?: string; ids?: readonly string[] }): string {
  const { ids, ...rest } = selectors;
  const described = describeArgs(rest, ['agent_id', 'client', 'type', 'before']);
  if (ids === undefined) return described === 'no filters' ? 'no selector' : described;
  const idText = ids.length <= 3 ? `ids=${JSON.stringify(ids)}` : `ids=[${ids.length} ids]`;
  return described === 'no filters' ? idText : `${described}, ${idText}`;
}

/** The receipt of a write, and what it superseded. */
export function receiptText(receipt: RecordReceipt, record: { type: string; title: string; supersedes?: readonly string[] | undefined }): string {
  const stored = `Stored the ${record.type} "${record.title}" as record ${receipt.id} (created ${receipt.created_at}).`;
  const superseded = [...new Set(record.supersedes ?? [])];
  if (superseded.length === 0) return stored;
  const which = superseded.length === 1 ? `record ${superseded[0]}` : `${superseded.length} records (${superseded.join(', ')})`;
  return `${stored} It supersedes ${which}: searches and listings leave ${superseded.length === 1 ? 'it' : 'them'} out from now on, and memory_get still reads ${superseded.length === 1 ? 'it' : 'them'}.`;
}

/** What an update changed, and the record's version now. */
export function updateText(record: MemoryRecord, patch: RecordPatch): string {
  const changes = Object.entries(patch)
    .filter(([, value]) => value !== undefined)
    .map(([field, value]) => (value === null ? `${field} removed` : `${field} changed`));
  return (
    `Updated the ${record.type} "${record.title}" (record ${record.id}): ${changes.join(', ')}. ` +
    `It is now version ${record.version} (updated ${record.updated_at ?? 'now'}); searches find its new text from now on.`
  );
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

/**
 * The month's use against the quotas, in plain words: what is used, of how much, and what is left, and what
 * a used-up quota means for the tools.
 */
export function usageText(usage: Usage): string {
  const line = (name: string, { used, quota, remaining }: Usage['records'], refused: string) =>
    `${name}: ${used} of ${quota} used this month (${remaining === 0 ? `none left: ${refused} until the month ends` : `${remaining} left`}).`;
  return [
    `Usage of ${usage.month} (UTC month) for tenant ${usage.tenant_id}:`,
    line('Records', usage.records, 'memory_remember is refused with record_quota_exceeded'),
    line('Searches', usage.queries, 'memory_recall is refused with query_quota_exceeded'),
    `Rate limit: ${usage.rate_limit.rate} requests a second, bursts of up to ${usage.rate_limit.burst}.`,
  ].join('\n');
}

/** The `_meta` key under which an error result carries the error as data. */
export const ERROR_META_KEY = 'agent-memory/error';

/**
 * A tool error a model can read and act on: `isError`, the text `<code>: <message>` (then what to do about
 * it, when the tool has a hint for that code), and the error as data under `_meta`. Not as
 * `structuredContent`: a client checks that against the tool's output schema, which describes a success.
 */
export function toolError(body: ErrorJson, hint?: string): CallToolResult {
  const wait = body.retry_after === undefined ? '' : ` (retry after ${body.retry_after} s)`;
  const quote = body.request_id === undefined ? '' : ` (request id ${body.request_id})`;
  return {
    isError: true,
    content: [{ type: 'text', text: `${body.error}: ${body.message}${wait}${quote}${hint === undefined ? '' : `\n${hint}`}` }],
    _meta: { [ERROR_META_KEY]: body },
  };
}
