import { stemmer } from 'stemmer';

/**
 * The analyzer: the one function that turns text into the terms the index stores and a query looks up,
 * so that the two always agree.
 *
 * - Unicode NFKC, so compatibility forms (the ligature "ﬁ", full-width letters) read as their plain forms;
 *   then lower case.
 * - Diacritics off Latin, Greek and Cyrillic letters ("café" is "cafe"), as FTS5's `remove_diacritics`
 *   does; marks of other scripts are part of their letters and stay.
 * - Words are runs of letters, digits and marks; everything else separates them (so "user's" is "user"
 *   and "s", and "e-mail" is "e" and "mail"), as in FTS5's unicode61 tokenizer.
 * - English words (ASCII letters only) are reduced by the Porter stemmer, as FTS5's `porter` tokenizer
 *   does: "running" and "runs" are "run". Other words are kept as they are.
 * - A word longer than MAX_TERM_CHARS is cut there, so no input makes a huge term.
 */
export const MAX_TERM_CHARS = 64;

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const DIACRITIC = /(\p{Script=Latin}|\p{Script=Greek}|\p{Script=Cyrillic})\p{M}+/gu;
const ENGLISH = /^[a-z]+$/;

// Printable ASCII and whitespace: text the Unicode normalizations leave as it is.
const PLAIN_ASCII = /^[\t\n\r\x20-\x7e]*$/;

/** The text as words, before stemming: folded, lower-cased, without diacritics. */
export function words(text: string): string[] {
  const folded = PLAIN_ASCII.test(text)
    ? text.toLowerCase()
    : text.normalize('NFKC').toLowerCase().normalize('NFD').replace(DIACRITIC, '$1').normalize('NFC');
  return folded.match(WORD) ?? [];
}

/**
 * Words already made terms: a language has a few tens of thousands of words in use, and the stemmer's
 * regular expressions cost more than a lookup. Bounded: emptied when it reaches TERM_CACHE_SIZE.
 */
const terms = new Map<string, string>();
const TERM_CACHE_SIZE = 100_000;

/** One word as the term the index stores. */
export function termOf(word: string): string {
  let term = terms.get(word);
  if (term === undefined) {
    const cut = word.length > MAX_TERM_CHARS ? [...word].slice(0, MAX_TERM_CHARS).join('') : word;
    term = ENGLISH.test(cut) ? stemmer(cut) : cut;
    if (terms.size >= TERM_CACHE_SIZE) terms.clear();
    terms.set(word, term);
  }
  return term;
}

/** The text as its terms, in order: position i of the result is the i-th word of the text. */
export function analyze(text: string): string[] {
  return words(text).map(termOf);
}
