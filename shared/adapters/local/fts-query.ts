import type { ParsedQuery } from '../../domain/query-parse.js';

/** An FTS5 string literal: the text in double quotes, inner quotes doubled. FTS5 reads it as plain text. */
function literal(text: string): string {
  return `"${text.replace(/"/g, '""')}"`;
}

/**
 * Builds the FTS5 MATCH expression for one tenant's search: the tenant's token AND any of the query's
 * terms or phrases in the title or body. Every user word goes in as a string literal, so no user text is
 * ever read as FTS5 syntax (operators, column filters, prefix stars, NEAR). The porter tokenizer stems
 * each literal the same way it stemmed the indexed text.
 */
export function ftsMatchExpression(tenantToken: string, query: ParsedQuery): string {
  const clauses = [...query.phrases.map((words) => literal(words.join(' '))), ...query.terms.map(literal)];
  return `tenant : ${literal(tenantToken)} AND {title body} : (${clauses.join(' OR ')})`;
}
