import type { ParsedQuery } from '../../../domain/query-parse.js';
import { matchesFilters, type RecordFilters } from '../../../domain/listing.js';
import type { SearchHit, StoredRecord } from '../../../domain/record.js';
import type { SearchQuery } from '../../../ports.js';
import { analyzeField, type FieldTerms } from '../../../search/analyzer.js';
import { clausesOf } from '../../../search/query.js';

/**
 * How a search hit from an index that follows the table through its stream is checked against the table
 * (docs/architecture.md, "Search on AWS: hits checked against the table"). The index may be seconds behind:
 * a hit may be a record since deleted, superseded or updated. The table is the truth, so a hit is shown as
 * the table holds the record now, with the rank the index gave it, or left out:
 *
 * - gone from the table, or hidden by a running forget job: left out;
 * - superseded now, unless the search includes superseded records: left out;
 * - its type or client changed so that a filter of the search no longer passes: left out;
 * - its title or body changed, and the search has text that the new text does not match: left out.
 *
 * "Matches" is the embedded engine's rule, on the analyzer both the local index and the query side share
 * (shared/search/analyzer.ts): the new title or body holds one of the query's words (as terms: NFKC, lower
 * case, no diacritics, Porter stems), or one of its phrases as consecutive terms. It is what the
 * AWS-shaped local mode's index decides once it has the new text; OpenSearch's `english` analyzer differs
 * at the edges (docs/opensearch.md, "Where it differs"), and until the stream has caught up those edges
 * decide, never for long.
 */

/** The hit as the table holds its record now, with the index's rank; null when the search must leave it out. */
export function currentHit(hit: SearchHit, record: StoredRecord | undefined, query: SearchQuery): SearchHit | null {
  if (!record) return null;
  if (!matchesFilters(record, filtersOf(query))) return null;
  const newText = record.title !== hit.title || record.body !== hit.body;
  if (newText && query.text !== null && !matchesText(record, query.text)) return null;
  return { ...record, rank: hit.rank };
}

/** The search's filters as a listing's: null agent or client means no filter, as in the index's query. */
function filtersOf(query: SearchQuery): RecordFilters {
  return {
    agent_id: query.agent_id ?? undefined,
    type: query.type,
    client: query.client ?? undefined,
    since: query.since,
    until: query.until,
    include_superseded: query.include_superseded === true ? true : undefined,
  };
}

/** Whether the record's title or body holds one of the query's words, or one of its phrases, as the embedded engine reads both. */
export function matchesText(record: Pick<StoredRecord, 'title' | 'body'>, text: ParsedQuery): boolean {
  const clauses = clausesOf(text);
  if (clauses.length === 0) return false;
  const fields = [analyzeField(record.title), analyzeField(record.body)];
  return clauses.some(({ terms }) => fields.some((field) => occurs(field, terms)));
}

/** Whether `terms` occur in `field` one after another (a single term may be an identifier whole). */
function occurs(field: FieldTerms, terms: readonly string[]): boolean {
  if (terms.length === 1) return field.terms.includes(terms[0]!) || field.wholes.some((w) => w.term === terms[0]);
  for (let at = 0; at + terms.length <= field.terms.length; at++) {
    if (terms.every((term, j) => field.terms[at + j] === term)) return true;
  }
  return false;
}
