/**
 * When text counts as blank: a rule of the API's (shared/domain/text.ts gives it to the domain) that the
 * query parser needs too, here with no dependency on Node, so that the console's bundle can read a query
 * as the service reads it (console/src/highlight.ts).
 */

/**
 * Characters that show nothing: white space (including no-break spaces), control characters, and the
 * default-ignorable code points (zero-width spaces and joiners, the byte order mark, variation selectors,
 * the Hangul fillers). A text made only of these reads as empty to a person and holds no searchable word.
 */
const INVISIBLE = /^[\p{White_Space}\p{Cc}\p{Default_Ignorable_Code_Point}]*$/u;

/** True when the text has no visible character (see INVISIBLE): empty, spaces, zero-width characters. */
export function isBlank(s: string): boolean {
  return INVISIBLE.test(s);
}
