import { isEmptyQuery, MAX_PHRASE_WORDS, MAX_QUERY_CLAUSES, parseQuery } from '../../shared/domain/query-parse.js';

describe('parseQuery', () => {
  test('absent, empty and blank mean no text', () => {
    expect(parseQuery(undefined)).toBeNull();
    expect(parseQuery('')).toBeNull();
    expect(parseQuery(' \t\n')).toBeNull();
  });

  test('words are lower-cased and stop words dropped; a repeated word stays repeated, since it weighs more', () => {
    expect(parseQuery('The Dark dark MODE of it')).toEqual({ terms: ['dark', 'dark', 'mode'], phrases: [] });
    expect(parseQuery('"dark mode" dark "dark mode"')).toEqual({ terms: ['dark'], phrases: [['dark', 'mode']] });
  });

  test("a question's function words are left out when it has other words, and searched when it has none", () => {
    expect(parseQuery('When did the user move to Berlin?')).toEqual({ terms: ['user', 'move', 'berlin'], phrases: [] });
    expect(parseQuery('what does Sam prefer for lunch')).toEqual({ terms: ['sam', 'prefer', 'lunch'], phrases: [] });
    expect(parseQuery('who has "can do"')).toEqual({ terms: [], phrases: [['can', 'do']] });
    expect(parseQuery('What did you do?')).toEqual({ terms: ['what', 'did', 'you', 'do'], phrases: [] });
    expect(isEmptyQuery(parseQuery('is it the one?')!)).toBe(false);
  });

  test('quoted phrases stay phrases, stop words included', () => {
    expect(parseQuery('deploy "state of the art" fast')).toEqual({
      terms: ['deploy', 'fast'],
      phrases: [['state', 'of', 'the', 'art']],
    });
  });

  test('an unmatched quote is read as plain words', () => {
    expect(parseQuery('"dark mode')).toEqual({ terms: ['dark', 'mode'], phrases: [] });
    expect(parseQuery('"a b" "c')).toEqual({ terms: ['c'], phrases: [['a', 'b']] });
  });

  test('operators and punctuation are words or nothing, never syntax', () => {
    expect(parseQuery('NEAR(dark mode) title:x * -y ^z')).toEqual({ terms: ['near', 'dark', 'mode', 'title', 'x', 'y', 'z'], phrases: [] });
    expect(parseQuery("'; DROP TABLE records; --")).toEqual({ terms: ['drop', 'table', 'records'], phrases: [] });
    expect(isEmptyQuery(parseQuery('*:()"" -')!)).toBe(true);
    expect(isEmptyQuery(parseQuery('the of and')!)).toBe(true);
  });

  test('non-Latin text is kept', () => {
    expect(parseQuery('暗い モード café')!.terms).toEqual(['暗い', 'モード', 'café']);
  });

  test('at most MAX_QUERY_CLAUSES clauses are kept, a repeated word counting each time', () => {
    const q = Array.from({ length: 500 }, (_, i) => `w${i}`).join(' ');
    expect(parseQuery(q)!.terms).toHaveLength(MAX_QUERY_CLAUSES);
    expect(parseQuery('heat '.repeat(5000))!.terms).toEqual(Array(MAX_QUERY_CLAUSES).fill('heat'));
  });

  test('a phrase is matched on its first MAX_PHRASE_WORDS words, and phrases that agree on those are one', () => {
    expect(MAX_PHRASE_WORDS).toBe(32);
    expect(parseQuery(`"${'x '.repeat(1000)}"`)).toEqual({ terms: [], phrases: [Array(32).fill('x')] });
    const long = Array.from({ length: 40 }, (_, i) => `w${i}`);
    expect(parseQuery(`"${long.join(' ')}" "${long.slice(0, 33).join(' ')}"`)).toEqual({ terms: [], phrases: [long.slice(0, 32)] });
  });
});
