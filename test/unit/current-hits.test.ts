import { currentHit, matchesText } from '../../shared/adapters/aws/dynamodb/current-hits.js';
import { parseQuery } from '../../shared/domain/query-parse.js';
import { newRecord, type SearchHit, type StoredRecord } from '../../shared/domain/record.js';
import type { SearchQuery } from '../../shared/ports.js';

const TENANT = '0193a000-0000-7000-8000-00000000000a';
const at = new Date('2026-11-10T12:00:00.000Z');
const indexed = newRecord(TENANT, { agent_id: 'bot', type: 'fact', title: 'User prefers dark mode', body: 'dark theme', client: 'acme' }, at);
const hit: SearchHit = { ...indexed, rank: 0.6 };
const query = (q: string | null, extra: Partial<SearchQuery> = {}): SearchQuery => ({ text: q === null ? null : parseQuery(q), limit: 10, ...extra });
const now = (changes: Partial<StoredRecord>): StoredRecord => ({ ...indexed, version: 2, updated_at: '2026-11-10T12:01:00.000Z', ...changes });

describe('a search hit checked against the table', () => {
  test('gone from the table: left out', () => {
    expect(currentHit(hit, undefined, query('dark'))).toBeNull();
  });

  test('unchanged text: shown as the table has it (a new classification, say), with the index rank, whatever the words', () => {
    const classified = { ...indexed, classification: { type: 'decision' as const, confidence: 0.5, model: 'm', classified_at: at.toISOString() } };
    expect(currentHit(hit, classified, query('dark'))).toEqual({ ...classified, rank: 0.6 });
  });

  test('new text that no longer matches: left out; new text that still matches: shown with the new text', () => {
    const light = now({ title: 'User switched to light mode', body: 'light theme' });
    expect(currentHit(hit, light, query('dark'))).toBeNull();
    expect(currentHit(hit, light, query('"dark mode"'))).toBeNull();
    expect(currentHit(hit, light, query('dark mode'))).toEqual({ ...light, rank: 0.6 });
    // Without text, nothing to match: shown as it is now.
    expect(currentHit(hit, light, query(null))).toEqual({ ...light, rank: 0.6 });
  });

  test('superseded now: left out unless the search includes superseded records', () => {
    const superseded = { ...indexed, superseded_by: '0193a000-0000-7000-8000-0000000000ff' };
    expect(currentHit(hit, superseded, query('dark'))).toBeNull();
    expect(currentHit(hit, superseded, query('dark', { include_superseded: false }))).toBeNull();
    expect(currentHit(hit, superseded, query('dark', { include_superseded: true }))).toEqual({ ...superseded, rank: 0.6 });
  });

  test('a type or client the search filters on that changed: left out; null filters are no filters', () => {
    const moved = now({ type: 'decision', client: null });
    expect(currentHit(hit, moved, query('dark', { type: 'fact' }))).toBeNull();
    expect(currentHit(hit, moved, query('dark', { client: 'acme' }))).toBeNull();
    expect(currentHit(hit, moved, query('dark', { type: 'decision', client: null, agent_id: null }))).toEqual({ ...moved, rank: 0.6 });
    expect(currentHit(hit, moved, query('dark', { agent_id: 'bot' }))).not.toBeNull();
  });
});

describe('matchesText: the embedded engine\'s rule, on its analyzer', () => {
  const record = { title: 'The ﬁle server keeps Running', body: 'Café opened; user\'s e-mail arrived' };
  test.each([
    ['a word, stemmed', 'runs', true],
    ['a word in the body, diacritics folded', 'cafe', true],
    ['a compatibility form (NFKC)', 'file', true],
    ['any of the words', 'zephyr server', true],
    ['a phrase, in order', '"file server"', true],
    ['a phrase across punctuation, as words', '"e mail"', true],
    ['a phrase out of order', '"server file"', false],
    ['a phrase split across title and body', '"running cafe"', false],
    ['no word of it', 'zephyr quill', false],
  ])('%s: %s', (_why, q, expected) => {
    expect(matchesText(record, parseQuery(q)!)).toBe(expected);
  });

  test('a query with nothing to match matches nothing', () => {
    expect(matchesText(record, parseQuery('the of')!)).toBe(false);
  });
});
