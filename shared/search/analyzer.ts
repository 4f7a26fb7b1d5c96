import { stemmer } from 'stemmer';
import { dropClitics, TOKEN } from '../text/tokens.js';

/**
 * The analyzer: the one function that turns text into the terms the index stores and a query looks up,
 * so that the two always agree. The rules, one by one, are in docs/api.md ("How `q` is read"), and
 * OpenSearch's analyzer (shared/adapters/aws/opensearch/analysis.ts) follows the same ones.
 *
 * - Unicode NFKC, so compatibility forms (the ligature "ﬁ", full-width letters) read as their plain forms;
 *   then lower case.
 * - Diacritics off Latin, Greek and Cyrillic letters ("café" is "cafe"), as FTS5's `remove_diacritics`
 *   does; marks of other scripts are part of their letters and stay.
 * - English clitics after an apostrophe (' or ’) are dropped: "user's" is "user", "what's" "what",
 *   "don't" "don", "we're" "we" (shared/text/tokens.ts).
 * - Words are runs of letters, digits and marks; everything else separates them. Words joined by one of
 *   `-`, `_`, `.`, `/` make an identifier ("inv-2024-0042", "v1.2.3"), which is indexed whole as well as in
 *   its words: the whole at the position of its first word, each word at a position of its own.
 * - English words (ASCII letters only) are reduced by the Porter stemmer, as FTS5's `porter` tokenizer
 *   does: "running" and "runs" are "run". Other words, and identifiers whole, are kept as they are.
 * - A word or identifier longer than MAX_TERM_CHARS is cut there, so no input makes a huge term.
 */
export const MAX_TERM_CHARS = 64;

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const DIACRITIC = /(\p{Script=Latin}|\p{Script=Greek}|\p{Script=Cyrillic})\p{M}+/gu;
const ENGLISH = /^[a-z]+$/;

// Printable ASCII and whitespace: text the Unicode normalizations leave as it is.
const PLAIN_ASCII = /^[\t\n\r\x20-\x7e]*$/;

/** The text folded: NFKC, lower-cased, without diacritics on Latin, Greek and Cyrillic letters. */
function fold(text: string): string {
  return PLAIN_ASCII.test(text)
    ? text.toLowerCase()
    : text.normalize('NFKC').toLowerCase().normalize('NFD').replace(DIACRITIC, '$1').normalize('NFC');
}

/** The text as tokens, before stemming: folded, clitics dropped, each a word or an identifier whole. */
export function tokens(text: string): string[] {
  return dropClitics(fold(text)).match(TOKEN) ?? [];
}

/**
 * Words already made terms: a language has a few tens of thousands of words in use, and the stemmer's
 * regular expressions cost more than a lookup. Bounded: emptied when it reaches TERM_CACHE_SIZE.
 */
const terms = new Map<string, string>();
const TERM_CACHE_SIZE = 100_000;

/** One word (or identifier) as the term the index stores. */
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

/** A field's terms: one per position, and each identifier's whole term at the position of its first word. */
export interface FieldTerms {
  /** Position i holds the i-th word's term: the words of an identifier each take a position. */
  terms: string[];
  /** The identifiers whole, in order: `position` is its first word's, so it takes no position of its own. */
  wholes: { position: number; term: string }[];
}

/** The text's terms, of at most `limit` positions (an identifier whose first word is past them is left out). */
export function analyzeField(text: string, limit = Infinity): FieldTerms {
  const field: FieldTerms = { terms: [], wholes: [] };
  for (const token of tokens(text)) {
    if (field.terms.length >= limit) break;
    const words = token.match(WORD)!;
    const position = field.terms.length;
    for (const word of words) if (field.terms.length < limit) field.terms.push(termOf(word));
    // A whole cut to MAX_TERM_CHARS within its first word is that word's term: it is there already.
    const whole = words.length > 1 ? termOf(token) : undefined;
    if (whole !== undefined && whole !== field.terms[position]) field.wholes.push({ position, term: whole });
  }
  return field;
}

/** The text as its terms by position, identifiers in their words only: what a phrase is matched on. */
export function analyze(text: string): string[] {
  return analyzeField(text).terms;
}

/** Every term the text adds to a query or a record: identifiers whole first, then the words by position. */
export function allTerms(text: string): string[] {
  const field = analyzeField(text);
  return [...field.wholes.map((w) => w.term), ...field.terms];
}
