import { stemmer } from 'stemmer';
import { CLITIC_SOURCE, dropClitics, TOKEN, TOKEN_SOURCE } from '../text/tokens.js';

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

/** A run of characters other than ASCII, with the ASCII character before it (the base of its first marks). */
const ISLAND = /[\x00-\x7f]?[^\x00-\x7f]+/g;

/**
 * The text folded: NFKC, lower-cased, without diacritics on Latin, Greek and Cyrillic letters. The
 * normalizations change no ASCII character and never join one to the character before it, so each island
 * (ISLAND) is normalized alone: the same text as normalizing the whole, at a fraction of the cost for text
 * that is mostly ASCII with a dash or an accent here and there. Lower case applies to the whole, where a
 * Greek final sigma reads what follows it.
 */
function fold(text: string): string {
  if (PLAIN_ASCII.test(text)) return text.toLowerCase();
  return text
    .replace(ISLAND, (island) => island.normalize('NFKC'))
    .toLowerCase()
    .replace(ISLAND, (island) => island.normalize('NFD').replace(DIACRITIC, '$1').normalize('NFC'));
}

/**
 * TOKEN for plain ASCII text once folded (lower case): the same pattern with its classes cut to what they
 * hold in ASCII (a letter is a-z, a number 0-9, and there are no marks). V8 runs it about five times faster
 * than the Unicode one, and most text is plain ASCII; test/unit/analyzer.test.ts holds the two to the same
 * tokens on every ASCII text it draws.
 */
const ASCII_TOKEN = new RegExp(TOKEN_SOURCE.replaceAll('\\p{L}', 'a-z').replaceAll('\\p{N}', '\\d').replaceAll('\\p{M}', ''), 'g');

/** Characters other than ASCII that no token holds (not letters, digits or marks): a dash, a euro sign, a quote. */
const SEPARATORS = /[^\x00-\x7f\p{L}\p{N}\p{M}]+/u;
const ASCII_ONLY = /^[\x00-\x7f]*$/;

/**
 * The text as tokens, before stemming: folded, clitics dropped, each a word or an identifier whole. Text
 * with other characters than ASCII is cut at the characters no token holds first, and each piece of ASCII
 * alone is read by ASCII_TOKEN: the Unicode pattern on a string that is not all ASCII costs V8 many times
 * more per character. No token spans such a character, nor does TOKEN's lookahead look past one.
 */
export function tokens(text: string): string[] {
  if (PLAIN_ASCII.test(text)) return dropClitics(text.toLowerCase()).match(ASCII_TOKEN) ?? [];
  const found: string[] = [];
  for (const piece of dropClitics(fold(text)).split(SEPARATORS)) {
    const pieceTokens = piece.match(ASCII_ONLY.test(piece) ? ASCII_TOKEN : TOKEN);
    if (pieceTokens) for (const token of pieceTokens) found.push(token);
  }
  return found;
}

/** A joiner of an identifier's words: a token without one is a single word. */
const JOINER = /[-_./]/;

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
    const words = JOINER.test(token) ? token.match(WORD)! : [token];
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

/** A word of a text, or an identifier whole, where it stands in the text as given, with its term. */
export interface TermSpan {
  /** UTF-16 offsets into the text as given: `text.slice(start, end)` is the word or identifier. */
  start: number;
  end: number;
  /** The term the index stores for it. */
  term: string;
  /** An identifier whole ("inv-2024-0042"), which also stands as its words; false for a word. */
  whole: boolean;
}

/**
 * The text's terms with where each stands in the text as given, for showing a person where a search matched
 * (the console marks them): the words in order, as `analyze` gives them, and each identifier whole after its
 * words. The text is read as `tokens` reads it (folded, clitics dropped, cut into tokens), keeping for each
 * character where it came from; a test holds the terms to `analyzeField`'s.
 */
export function termSpans(text: string): TermSpan[] {
  const spans: TermSpan[] = [];
  const { folded, from, to } = foldedWithOffsets(text);
  const { cut, toFolded } = withoutClitics(folded);
  const span = (start: number, end: number, whole: boolean) =>
    spans.push({ start: from(toFolded(start)), end: to(toFolded(end - 1)), term: termOf(cut.slice(start, end)), whole });
  const word = new RegExp(WORD.source, 'gu');
  for (const token of cut.matchAll(new RegExp(TOKEN_SOURCE, 'gu'))) {
    const start = token.index;
    const end = start + token[0].length;
    word.lastIndex = start;
    let words = 0;
    for (let w = word.exec(cut); w !== null && w.index < end; w = word.exec(cut)) {
      span(w.index, w.index + w[0].length, false);
      words++;
    }
    if (words > 1) span(start, end, true);
  }
  return spans;
}

/**
 * A run of ASCII that no combining mark follows (folded by lower-casing alone, a character for a character),
 * or one character with its combining marks, or a run of Hangul jamo (which NFKC joins into syllables): the
 * pieces `fold` is applied to one at a time, so that each character folded knows where it came from.
 */
const ASCII = /^[\0-\x7f]+$/;
const FOLD_PIECE = /[\0-\x7f]+(?!\p{M})|[\u1100-\u11ff\ua960-\ua97f\ud7b0-\ud7ff]+\p{M}*|[^]\p{M}*/gu;

/** Offsets into the text of a folded character: where the piece it came from starts (`from`) and ends (`to`). */
type Offset = (at: number) => number;

/**
 * The text folded as `fold` folds it, with, for each of its UTF-16 units, the offsets in the text of the
 * piece it came from (`from`, `to`). Folded a piece at a time, except for the capital sigma, whose lower
 * case (σ, or the final ς) depends on the letters around it: it is lower-cased as the whole text's
 * lower-casing makes it.
 */
function foldedWithOffsets(text: string): { folded: string; from: Offset; to: Offset } {
  if (PLAIN_ASCII.test(text)) return { folded: text.toLowerCase(), from: (at) => at, to: (at) => at + 1 };
  const from: number[] = [];
  const to: number[] = [];
  const parts: string[] = [];
  for (const piece of finalSigmas(text).matchAll(FOLD_PIECE)) {
    const ascii = ASCII.test(piece[0]);
    const folded = ascii ? piece[0].toLowerCase() : fold(piece[0]);
    for (let i = 0; i < folded.length; i++) {
      from.push(ascii ? piece.index + i : piece.index);
      to.push(ascii ? piece.index + i + 1 : piece.index + piece[0].length);
    }
    parts.push(folded);
  }
  return { folded: parts.join(''), from: (at) => from[at]!, to: (at) => to[at]! };
}

/**
 * The text with each capital sigma lower-cased as the whole text's lower-casing makes it, σ or the final ς.
 * The same length as the text: the one capital whose lower case is longer (U+0130, İ) is read as another.
 */
function finalSigmas(text: string): string {
  if (!text.includes('\u03a3')) return text;
  const lower = text.replace(/\u0130/g, 'I').toLowerCase();
  return text.replace(/\u03a3/g, (_, at: number) => lower[at]!);
}

const CLITIC = new RegExp(CLITIC_SOURCE, 'giu');

/**
 * The text without its English clitics, as `dropClitics` leaves it (so "a's_b" is the identifier "a_b", as
 * the analyzer reads it), and where each of its characters stands in the text.
 */
function withoutClitics(text: string): { cut: string; toFolded: Offset } {
  if (!text.includes("'") && !text.includes('\u2019')) return { cut: text, toFolded: (at) => at };
  const parts: string[] = [];
  // From index `from` of the cut text on, its characters stand `by` further on in the text.
  const shifts: { from: number; by: number }[] = [{ from: 0, by: 0 }];
  let last = 0;
  let by = 0;
  for (const clitic of text.matchAll(CLITIC)) {
    parts.push(text.slice(last, clitic.index));
    by += clitic[0].length;
    last = clitic.index + clitic[0].length;
    shifts.push({ from: last - by, by });
  }
  parts.push(text.slice(last));
  const toFolded = (at: number) => {
    // The last shift that starts at or before `at`.
    let low = 0;
    let high = shifts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (shifts[mid]!.from <= at) low = mid;
      else high = mid - 1;
    }
    return at + shifts[low]!.by;
  };
  return { cut: parts.join(''), toFolded };
}
