/**
 * How text is cut into tokens: the search engine's own copy of shared/domain/tokens.ts, since the engine
 * imports nothing outside shared/search (.dependency-cruiser.mjs); test/unit/analyzer.test.ts checks that
 * the two agree. docs/api.md ("How `q` is read") states the rules.
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
