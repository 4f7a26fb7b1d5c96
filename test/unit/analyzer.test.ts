import { analyzeField } from '../../shared/search/analyzer.js';
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
