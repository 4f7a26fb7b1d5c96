import { RANKING, SUGGESTED_MIN_RANK } from '../shared/domain/rank.js';
import { LIMITS, SEARCH_LIMIT_RANGE } from '../shared/domain/limits.js';
import { RECORD_TYPES } from '../shared/domain/record-schema.js';
import { FORGET_IDS_MAX, RECORD_TYPE_DESCRIPTIONS } from '../shared/domain/schemas.js';

/**
 * What the model that chooses among the tools reads: when to use each one, and how. These texts are the
 * tools' interface as much as their schemas are, so they live together here, apart from the wiring.
 */

const TYPES = RECORD_TYPES.map((t) => `- ${t}: ${RECORD_TYPE_DESCRIPTIONS[t]}`).join('\n');

/** When to correct a record and when to replace it: the same words in memory_remember and memory_update. */
const UPDATE_OR_SUPERSEDE = `Correct or replace? memory_update corrects the same fact in place, when it was stored wrong or incomplete: a typo, a wrong value or name, a missing detail, the wrong type. When the facts themselves changed (the user moved, changed a preference, a decision was reversed), store the new fact with memory_remember and supersedes: [the old record's id] instead: "User switched to light mode" supersedes "User prefers dark mode". The old record is kept as history, marked superseded, and searches and listings leave it out from then on, so memory_recall answers with the current fact.`;

/** The server's instructions, which a client gives the model with the tools. */
export const INSTRUCTIONS =
  'A long-term memory shared across conversations. Call memory_recall before answering when earlier context may ' +
  'matter, and memory_remember when you learn something worth keeping. Titles are what search finds best. ' +
  'memory_update corrects a record that is wrong; memory_remember with supersedes replaces one that is out of date, keeping it as history. ' +
  'memory_list and memory_get review what is stored; memory_forget deletes records, only after a dry run the user has agreed to. ' +
  "memory_usage says what is left of the month's quotas.";

/** memory_remember. */
export const REMEMBER = `Store something worth remembering across conversations in the long-term memory, as one record.
Use it when you learn a fact about the user or their world, when a decision is made, when a conversation turn matters later, when you hand over a deliverable, when a follow-up is promised or still open, or when you notice a behavioural signal. One idea per record.

Pick the type:
${TYPES}
If unsure, call memory_classify first.

The title is the main search signal (a match in the title weighs ${RANKING.titleWeight} times a match in the body): write a short, self-contained statement with the words someone would search for later, such as "The user prefers dark mode". Put context, reasons, names and numbers in the body.

When the new record replaces records stored earlier, pass their ids (from memory_recall or memory_list, at most ${LIMITS.supersedesMax}) as supersedes. ${UPDATE_OR_SUPERSEDE}

A call stores a new record each time. To make a retry safe, pass the same idempotency_key: within 24 hours the same key and record store it only once.`;

/** memory_update. */
export const UPDATE = `Correct a record of the long-term memory in place, by its id: change its title, body, type, client or metadata. Pass only the fields that change; client: null or metadata: null removes that field. The record keeps its id; its version goes up by one, and from then on searches find the new text and no longer the old. The old text is not kept.

${UPDATE_OR_SUPERSEDE}

Pass if_version, the version memory_get showed, to change the record only if nobody changed it since you read it. If someone did, the answer is version_conflict and nothing changed: read it again with memory_get, and decide whether your change still applies.`;

/** memory_recall. */
export const RECALL = `Search the long-term memory for records stored earlier, by you or other agents of the same tenant.
Use it before answering when earlier conversations may matter: the user's preferences and context, past decisions, open follow-ups, what was delivered or said.

q is plain English, not a query language: records matching any of its words (stemmed, so "running" finds "runs") or "quoted phrases" come back best first, with a rank from 0 to 1; titles weigh ${RANKING.titleWeight} times bodies. Without q, the newest records come first. Filter by type, agent_id or client, and by creation time from since (inclusive) until until (exclusive): dates YYYY-MM-DD or ISO 8601 date-times (for "last week": since its first day, until the day after its last); limit is ${SEARCH_LIMIT_RANGE} (default ${LIMITS.searchLimitDefault}). Records that a newer record superseded are left out; include_superseded: true brings them back, each saying which record superseded it (to see how a fact changed).

Search with the words the memory itself would contain: the names, terms and identifiers a stored note would use ("Priya on-call rotation", "INV-2024-0042", "Dana flight preferences"), not the framing of a question ("what do we know about…"). A record matches by its words, not by meaning.

The rank is the share of what the query could score at best, so it means the same whatever the query: hits ranked below ${SUGGESTED_MIN_RANK}, the cut-off the service suggests, are left out unless you pass min_rank (0 to see every match, however weak; higher to be stricter). When nothing ranks that high the answer says that nothing relevant was found: then the memory holds nothing on it, and weak matches would only be noise.

The answer is a numbered list: each record's title, then its type, rank, creation time, agent, client and id (and its version when it was updated), then its body (a very long body is cut in the text, and says so).`;

/** The description of memory_recall's min_rank, whose default here is the suggested cut-off, not the API's 0. */
export const RECALL_MIN_RANK = `Leave out hits ranked below this, 0 to 1. Default ${SUGGESTED_MIN_RANK}, the suggested cut-off, with q; without q no default, and any value above 0 leaves every record out (they rank 0). 0 keeps every match.`;

/** memory_classify. */
export const CLASSIFY = `Suggest which of the six record types fits a title and a body, before storing them with memory_remember. It stores nothing.
The answer is the suggested type with a calibrated confidence (at about 0.9, about 90 % of suggestions are right) and a score for every type. Below about 0.5 the model does not know: choose the type yourself from its description.`;

/** memory_get. */
export const GET = `Read one record of the long-term memory in full, by its id (as memory_recall, memory_list or memory_remember gave it): its title, type, creation time, agent, client, id and version (pass it as if_version to memory_update), when it was last updated, the id of the record that superseded it if one did, then its whole body and its metadata.
An id that is unknown, malformed, deleted or another tenant's answers not_found.`;

/** memory_list. */
export const LIST = `List the records of the long-term memory in the order they were written, newest first (order "asc": oldest first), optionally only those of one agent_id, type or client, or created from since (inclusive) until until (exclusive): dates YYYY-MM-DD or ISO 8601 date-times. Superseded records are left out unless include_superseded is true.
Unlike memory_recall it does not search or rank: use it to review what is stored, for example before memory_forget. Use memory_recall to find something.

One call answers one page of up to limit records (${SEARCH_LIMIT_RANGE}, default ${LIMITS.searchLimitDefault}). When there are more, the answer ends with a cursor: call memory_list again with the same filters and that cursor for the next page. A cursor with other filters is an invalid_cursor error. Bodies are cut short in the list; memory_get reads one record in full.`;

/** memory_forget. */
export const FORGET = `Delete records from the long-term memory, for good: every record that matches all the selectors given (at least one of agent_id, client, type, before, ids). before is a date (YYYY-MM-DD) or ISO 8601 date-time: records created before it. ids (from memory_recall or memory_list) name exact records, at most ${FORGET_IDS_MAX}.
Use it when the user asks you to forget something, or to remove records that are wrong and should not be kept even as history (to correct one, use memory_update; to replace an outdated one, memory_remember with supersedes).

Without confirm it is a dry run that deletes nothing: it says how many records match and shows a few of them. Tell the user what would be deleted, and only when they agree call memory_forget again with the same selectors and confirm: true, which deletes them.`;

/** memory_usage. */
export const USAGE = `Say how much of this month's quotas the tenant has used, and what is left: records stored (memory_remember) and searches (memory_recall), each against its monthly quota, and the rate limit of this API key. Months are UTC; the counts start again with each month. It takes no arguments and counts against neither quota.
Use it when memory_remember or memory_recall was refused with record_quota_exceeded or query_quota_exceeded, before storing or searching a lot, or when the user asks how much memory is left.`;
