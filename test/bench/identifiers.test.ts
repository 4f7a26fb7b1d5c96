import { expect, test } from '@jest/globals';
import { identifierLookups } from '../../bench/quality/identifiers.js';
import type { QualitySet } from '../../bench/quality/sets.js';

test('every identifier query of the agent sets ranks the record holding the exact identifier first', () => {
  const lookups = identifierLookups();
  expect(lookups.queries).toBeGreaterThanOrEqual(10);
  expect(lookups.missed).toEqual([]);
  expect(lookups.first).toBe(lookups.queries);
});

test('a lookup whose first hit holds only parts of the identifier counts as missed; an identifier no record holds is not asked', () => {
  const doc = (id: string, title: string) => ({ id, agent_id: 'a', type: 'fact' as const, title, body: 'invoice for the customer', client: null });
  const set: QualitySet = {
    name: 'ids',
    // INV-2024-0057 is the only record; the query names INV-2024-0042, which it only shares parts with.
    docs: [doc('1', 'INV-2024-0057 paid'), doc('2', 'INV 2024 0042 paid in parts')],
    queries: [
      { qid: 'q1', q: 'INV-2024-0057', filters: {} },
      { qid: 'q2', q: 'INV-2024-0099', filters: {} },
    ],
    qrels: new Map(),
    skipped: [],
  };
  expect(identifierLookups([set])).toEqual({ queries: 1, first: 1, missed: [] });
  // The filter leaves out the record that holds it: the first hit holds its parts only, and is counted missed.
  const filtered: QualitySet = { ...set, name: 'ids2', docs: [doc('1', 'INV-2024-0042 paid'), { ...doc('2', 'INV 2024 0042 in parts'), type: 'signal' as const }], queries: [{ qid: 'q1', q: 'INV-2024-0042', filters: { type: 'signal' as const } }] };
  expect(identifierLookups([filtered])).toEqual({ queries: 1, first: 0, missed: ['ids2: INV-2024-0042'] });
});
