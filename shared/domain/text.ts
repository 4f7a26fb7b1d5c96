/**
 * The text rules of the API, in one place: how text is measured, when it counts as blank, and which
 * strings can be stored at all. Every store keeps text as UTF-8 (SQLite, DynamoDB, OpenSearch), and
 * UTF-8 cannot hold an unpaired UTF-16 surrogate: such a string would come back changed, so it is refused.
 */

/** UTF-8 byte length of a string. */
export function utf8Bytes(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** Length in Unicode code points, which is what "characters" means in the limits. */
export function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** When a text is blank (no visible character): shared/text/blank.ts, where the console's bundle can import it. */
export { isBlank } from '../text/blank.js';

/** The index (in UTF-16 code units) of the first unpaired surrogate, or -1 when the string is well-formed. */
export function unpairedSurrogateAt(s: string): number {
  if (s.isWellFormed()) return -1;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
      else return i;
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      return i;
    }
  }
  return -1;
}

/** The message for a string that is not well-formed Unicode, or null when it is. */
export function malformedTextProblem(s: string): string | null {
  const at = unpairedSurrogateAt(s);
  return at < 0 ? null : `is not well-formed Unicode: an unpaired surrogate (\\u${s.charCodeAt(at).toString(16)}) at position ${at}`;
}
