import fc from 'fast-check';
import { analyze, analyzeField, termSpans, tokens } from '../../shared/search/analyzer.js';
import { dropClitics, TOKEN_SOURCE } from '../../shared/text/tokens.js';
import { matchSpans } from '../../shared/search/matches.js';
import { clausesOf } from '../../shared/search/query.js';
import { parseQuery } from '../../shared/domain/query-parse.js';
import { ANALYZER_CASES } from '../support/analyzer-cases.js';

/** A field's terms as OpenSearch's `_analyze` lists them: by position, an identifier whole before its words. */
function listed(text: string): string[] {
  const { terms, wholes } = analyzeField(text);
  return terms.flatMap((term, i) => [...wholes.filter((w) => w.position === i).map((w) => w.term), term]);
}

test.each(ANALYZER_CASES)('$text', ({ text, terms }) => {
  expect(listed(text)).toEqual(terms);
});

test('an identifier takes the positions of its words only, its whole at the first', () => {
  expect(analyzeField('fix INV-2024-0042 now')).toEqual({ terms: ['fix', 'inv', '2024', '0042', 'now'], wholes: [{ position: 1, term: 'inv-2024-0042' }] });
});

test('a whole cut within its first word is that word, and is not stored twice', () => {
  const long = 'x'.repeat(70);
  expect(analyzeField(`${long}-1`)).toEqual({ terms: ['x'.repeat(64), '1'], wholes: [] });
});

test("the parser drops clitics before its stop words and keeps an identifier whole", () => {
  expect(parseQuery("What's the user's name?")).toEqual({ terms: ['user', 'name'], phrases: [] });
  expect(parseQuery("it's")).toEqual({ terms: [], phrases: [] });
  expect(parseQuery('INV-2024-0042 "user’s INV-2024-0042"')).toEqual({ terms: ['inv-2024-0042'], phrases: [['user', 'inv-2024-0042']] });
});

describe('termSpans: the terms with where they stand in the text as given (what the console marks)', () => {
  test('a word, a possessive and an identifier, each at its offsets with its term', () => {
    const text = "The User's INV-2024-0042 paid";
    expect(termSpans(text).map((s) => [text.slice(s.start, s.end), s.term, s.whole])).toEqual([
      ['The', 'the', false],
      ['User', 'user', false],
      ['INV', 'inv', false],
      ['2024', '2024', false],
      ['0042', '0042', false],
      ['INV-2024-0042', 'inv-2024-0042', true],
      ['paid', 'paid', false],
    ]);
  });

  test.each(ANALYZER_CASES)('the terms of analyzeField: $text', ({ text }) => {
    const spans = termSpans(text);
    const { terms, wholes } = analyzeField(text);
    expect(spans.filter((s) => !s.whole).map((s) => s.term)).toEqual(terms);
    expect(spans.filter((s) => s.whole).map((s) => s.term)).toEqual(expect.arrayContaining(wholes.map((w) => w.term)));
  });

  test('on any text of letters (accented, combining, ligatures, capitals, sigmas, jamo), digits, joiners, apostrophes and spaces, the terms are analyzeField’s', () => {
    const piece = fc.constantFrom(
      ...['a', 'B', 'e', 'É', 'é', '\u0301', 'ﬁ', 'İ', 'ß', 'ǅ', 'z', 'Σ', 'σ', 'ж', '日', '\u1100', '\u1161', '\u11a8', 'Ⅻ', '①', '²'],
      ...['1', '0', '-', '_', '.', '/', "'", '’', 's', 't', 're', ' ', '\n', ',', '?', 'ing', 'ed', 'user', 'USERS'],
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }).map((pieces) => pieces.join('')), (text) => {
        const spans = termSpans(text);
        const { terms, wholes } = analyzeField(text);
        expect(spans.filter((s) => !s.whole).map((s) => s.term)).toEqual(terms);
        expect(spans.filter((s) => s.whole).map((s) => s.term)).toEqual(expect.arrayContaining(wholes.map((w) => w.term)));
        // Each span is where its word stands: its term is that text, analyzed alone (where a sigma is final
        // depends on what follows it).
        const sigma = (term: string) => term.replace(/ς/g, 'σ');
        for (const s of spans.filter((span) => !span.whole)) expect(analyze(text.slice(s.start, s.end)).map(sigma)).toContain(sigma(s.term));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('matchSpans: where a query matches, as the engine matches it', () => {
  const marked = (q: string, text: string) => matchSpans(text, clausesOf(parseQuery(q)!)).map((s) => text.slice(s.start, s.end));

  test("stems and possessives: user matches user's and Users, prefer matches preferences", () => {
    expect(marked('user', "The user's settings; Users agree")).toEqual(['user', 'Users']);
    expect(marked('What does the user prefer?', 'Stored preferences: preferred language')).toEqual(['preferences', 'preferred']);
    expect(marked('preferences', 'I prefer tea')).toEqual(['prefer']);
  });

  test('the stop words the parser drops are not marked; a query of only function words marks them', () => {
    expect(marked('When did the user move to Berlin?', 'The user moved to Berlin in March')).toEqual(['user', 'moved', 'Berlin']);
    expect(marked('what did you do?', 'What you did')).toEqual(['What', 'you', 'did']);
  });

  test('a phrase matches its words in order and next to each other only', () => {
    expect(marked('"dark mode"', 'Dark mode on; mode dark; dark and mode')).toEqual(['Dark mode']);
    expect(marked('"the user\'s name"', "The user's name")).toEqual(["The user's name"]);
  });

  test('an identifier matches whole, and by its words', () => {
    expect(marked('INV-2024-0042', 'Paid INV-2024-0042, not INV-2024-0057')).toEqual(['INV-2024-0042', 'INV', '2024', '0042', 'INV', '2024']);
  });
});

describe('the fast paths: ASCII text, and text normalized and cut island by island', () => {
  // What the tokens are by the rules themselves: the whole text folded at once (NFKC, lower case, NFD,
  // diacritics off Latin, Greek and Cyrillic letters, NFC), clitics dropped, the Unicode pattern over all of it.
  const TOKEN_U = new RegExp(TOKEN_SOURCE, 'gu');
  const DIACRITIC = /(\p{Script=Latin}|\p{Script=Greek}|\p{Script=Cyrillic})\p{M}+/gu;
  const byRules = (text: string) =>
    dropClitics(text.normalize('NFKC').toLowerCase().normalize('NFD').replace(DIACRITIC, '$1').normalize('NFC')).match(TOKEN_U) ?? [];
  const sameTokens = (text: string) => expect(tokens(text)).toEqual(byRules(text));

  test('text with other characters gives the tokens of the whole text folded at once, marks, ligatures, final sigma, Hangul and astral characters included', () => {
    const piece = fc.constantFrom(
      'a', 'e', 'E', 'x', '7', '-', '_', '.', '/', ' ', "'s", '’s', '’', '<',
      'é', 'É', '\u0301', '\u0308', '\u0338', '\u0345', '—', '€', 'ﬁ', 'ﬀ', 'Ａ', '½', '①', 'Σ', 'ς', 'Ω', 'İ', 'ß', 'ǭ', 'ℌ',
      '한', '\u1100', '\u1161', '\u11a8', 'ক', '\u09c7', '\u09be', '中', '\ud83d\ude00', '\u200d', '\u00a0', 'ı',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }).map((pieces) => pieces.join('')), sameTokens),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), sameTokens),
      { numRuns: 2000 },
    );
  });

  test('plain ASCII text gives the tokens of the Unicode pattern, on every text drawn from letters, digits, joiners, apostrophes and punctuation', () => {
    const piece = fc.constantFrom('a', 'Z', 'q', '7', '0', '-', '_', '.', '/', "'", "'s", "'t", ' ', '\n', 'x', 'E', ',', '!', '(', 'ed', 'ing', '--', '..');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }).map((pieces) => pieces.join('')), sameTokens),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 80 }), sameTokens),
      { numRuns: 2000 },
    );
  });

  test('an identifier is still cut into its words and kept whole, a single word as itself', () => {
    expect(analyzeField('Paid INV-2024-0042 on v1.2.3')).toEqual({
      terms: ['paid', 'inv', '2024', '0042', 'on', 'v1', '2', '3'],
      wholes: [
        { position: 1, term: 'inv-2024-0042' },
        { position: 5, term: 'v1.2.3' },
      ],
    });
  });
});
