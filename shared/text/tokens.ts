/**
 * How text is cut into tokens, declared once for the query parser (shared/domain/query-parse.ts), the
 * embedded engine's analyzer (shared/search/analyzer.ts) and OpenSearch's analysis settings
 * (shared/adapters/aws/opensearch/analysis.ts), which use the same two patterns in Java's syntax. shared/text
 * imports nothing, so that the domain and the engine, which import nothing of each other, may both import
 * it (.dependency-cruiser.mjs). docs/api.md ("How `q` is read") states the rules.
 */

/**
 * An English clitic at the end of a word, after an apostrophe (' U+0027 or ’ U+2019): the possessive and
 * "is"/"has" `'s` ("user's", "what's"), `'t` ("don't"), `'re`, `'ll`, `'m`, `'ve`, `'d`. It is dropped, so
 * "user's" reads "user" and never leaves a word `s` that would match every possessive. Any other
 * apostrophe ("users'", "o'brien") separates words, as punctuation does.
 */
export const CLITIC_SOURCE = "(?<=[\\p{L}\\p{N}\\p{M}])['\u2019](?:s|t|re|ll|m|ve|d)(?![\\p{L}\\p{N}\\p{M}])";
const CLITIC = new RegExp(CLITIC_SOURCE, 'giu');

/**
 * A token: a word (letters, digits and marks), or an identifier: words joined each by one `-`, `_`, `.` or
 * `/`, that holds a digit or a joiner other than `-` ("INV-2024-0042", "ERR_CONN_RESET", "v1.2.3",
 * "src/lib/retry.ts"). Words joined by hyphens only ("e-mail", "boundary-layer") are words apart: they are
 * written with or without the hyphen, and whole they would match only the one spelling (on Cranfield,
 * indexing them whole too ranks worse). The lookahead checks, from the token's start, that a digit or a
 * `_`, `.` or `/` joiner comes before the identifier ends; without one, the token is its first word.
 */
export const TOKEN_SOURCE =
  '(?:(?=(?:[\\p{L}\\p{M}]+-)*[\\p{L}\\p{M}]*(?:\\p{N}|[_./][\\p{L}\\p{N}\\p{M}]))[\\p{L}\\p{N}\\p{M}]+(?:[-_./][\\p{L}\\p{N}\\p{M}]+)*|[\\p{L}\\p{N}\\p{M}]+)';
/** TOKEN_SOURCE as a global regular expression, for `String.match`. */
export const TOKEN = new RegExp(TOKEN_SOURCE, 'gu');

/** The text without its English clitics (CLITIC_SOURCE). */
export function dropClitics(text: string): string {
  return text.includes("'") || text.includes('\u2019') ? text.replace(CLITIC, '') : text;
}
