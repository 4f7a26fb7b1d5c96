import { ENGLISH_STOP_WORDS, QUERY_FUNCTION_WORDS } from './stop-words.js';
import { isBlank } from '../text/blank.js';
import { dropClitics, TOKEN } from '../text/tokens.js';

/**
 * Free text, parsed into what a search backend matches: single words (OR-ed, stop words dropped) and
 * quoted phrases (kept whole). Every backend builds its own query from this structure, never from the
 * user's text, so no user syntax reaches an engine's query language.
 */
export interface ParsedQuery {
  /**
   * Lower-cased words outside quotes (an identifier such as "inv-2024-0042" is one word, and a clitic such
   * as the `'s` of "what's" is dropped: shared/text/tokens.ts), in order, without stop words (ENGLISH_STOP_WORDS), and without
   * function words (QUERY_FUNCTION_WORDS) unless the query has nothing else. A word the query repeats is
   * here as often (BM25's query term frequency: it weighs that much more). Stemming is the engine's job.
   */
  terms: string[];
  /** Each quoted phrase as its lower-cased words, in order; stop words stay, since a phrase is exact. */
  phrases: string[][];
}

/** At most this many terms (a repeated word counting each time) and phrases are kept from one query; the rest is ignored. */
export const MAX_QUERY_CLAUSES = 64;

/**
 * A quoted phrase is matched on its first this many words; the words after them are ignored. Matching a
 * phrase in a record costs about its words' positions there added up, once per word of the phrase, so
 * without a cap a phrase of a thousand words over a long record of one repeated word took seconds; with
 * it, a phrase costs at most 32 times its words' postings (docs/api.md, "Search").
 */
export const MAX_PHRASE_WORDS = 32;

/**
 * The form of text that search engines index and match: Unicode NFKC, so that compatibility characters
 * (the ligature "ﬁ", full-width letters) match their plain forms. Backends apply it to the indexed title
 * and body, and the parser applies it to the query; the stored record keeps the text exactly as sent.
 */
export function searchableText(text: string): string {
  return text.normalize('NFKC');
}

/** The text's words, lower-cased, without English clitics ("what's" is "what"), an identifier whole (tokens.ts). */
function words(text: string): string[] {
  return dropClitics(searchableText(text).toLowerCase()).match(TOKEN) ?? [];
}

/**
 * Parses a `q` value. Returns null when `q` is absent, empty or blank (the "recent records" search);
 * otherwise a ParsedQuery, which may be empty when `q` holds only stop words (ENGLISH_STOP_WORDS) or
 * punctuation.
 * An unmatched double quote is ignored.
 */
export function parseQuery(q: string | undefined | null): ParsedQuery | null {
  if (q === undefined || q === null || isBlank(q)) return null;
  const candidates: string[] = [];
  const phrases: string[][] = [];
  const seenPhrases = new Set<string>();
  const segments = q.split('"');
  // Segments alternate outside/inside quotes. With an odd count of quotes the last segment has no
  // closing quote, so it is read as plain words.
  const closed = segments.length % 2 === 1 ? segments.length : segments.length - 1;
  segments.forEach((segment, i) => {
    const quoted = i % 2 === 1 && i < closed;
    const ws = words(segment);
    if (quoted) {
      const phrase = ws.slice(0, MAX_PHRASE_WORDS);
      const key = phrase.join(' ');
      if (phrase.length > 0 && !seenPhrases.has(key)) {
        seenPhrases.add(key);
        phrases.push(phrase);
      }
      return;
    }
    for (const w of ws) if (!ENGLISH_STOP_WORDS.has(w)) candidates.push(w);
  });
  // Function words count only in a query that has nothing else: "what did you do?" still searches.
  const content = candidates.filter((w) => !QUERY_FUNCTION_WORDS.has(w));
  const terms = content.length > 0 || phrases.length > 0 ? content : candidates;
  const keptPhrases = phrases.slice(0, MAX_QUERY_CLAUSES);
  return { phrases: keptPhrases, terms: terms.slice(0, MAX_QUERY_CLAUSES - keptPhrases.length) };
}

/** True when a parsed query has nothing to match. */
export function isEmptyQuery(q: ParsedQuery): boolean {
  return q.terms.length === 0 && q.phrases.length === 0;
}
