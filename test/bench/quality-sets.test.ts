import { describe, expect, test } from '@jest/globals';
import { summarize } from '../../bench/quality/metrics.js';
import { agentMemory, agentQuestions, cacm, CACM_PLACEHOLDER, cranfield, type QualitySet } from '../../bench/quality/sets.js';
import { isBlank } from '../../shared/domain/text.js';
import { analyze } from '../../shared/search/analyzer.js';

const judgedQueries = (set: QualitySet) => set.queries.filter((q) => [...(set.qrels.get(q.qid)?.values() ?? [])].some((g) => g > 0)).length;

describe('quality set loaders', () => {
  const sets = { cranfield: cranfield(), cacm: cacm(), agentMemory: agentMemory(), agentQuestions: agentQuestions() };

  test('cacm: every document, every query, the 52 judged queries and their 796 judgments', () => {
    const set = sets.cacm;
    expect(set.name).toBe('cacm');
    expect(set.docs).toHaveLength(3204);
    expect(set.skipped).toEqual([]);
    expect(new Set(set.docs.map((d) => d.id)).size).toBe(3204);
    expect(set.queries).toHaveLength(64);
    expect(judgedQueries(set)).toBe(52);
    expect([...set.qrels.values()].reduce((n, j) => n + j.size, 0)).toBe(796);
    expect([...set.qrels.values()].every((j) => [...j.values()].every((g) => g === 1))).toBe(true);
    // Every judged document is loaded.
    const ids = new Set(set.docs.map((d) => d.id));
    expect([...set.qrels.values()].every((j) => [...j.keys()].every((id) => ids.has(id)))).toBe(true);
  });

  test('cacm: a missing abstract (or title) is stored as a placeholder that has no words', () => {
    const set = sets.cacm;
    expect(set.docs.filter((d) => d.body === CACM_PLACEHOLDER)).toHaveLength(1617);
    expect(set.docs.filter((d) => d.title === CACM_PLACEHOLDER).map((d) => d.id)).toEqual(['3193']);
    expect(isBlank(CACM_PLACEHOLDER)).toBe(false);
    expect(analyze(CACM_PLACEHOLDER)).toEqual([]);
  });

  test('the queries without judgments count in no average', () => {
    const set = sets.cacm;
    const runs = set.queries.map((q) => ({ ranking: [] as string[], judgments: set.qrels.get(q.qid) ?? new Map<string, number>() }));
    expect(summarize(runs).queries).toBe(52);
  });

  test('no set stores a blank title or body, which the API would refuse', () => {
    for (const set of Object.values(sets)) {
      expect(set.docs.filter((d) => isBlank(d.title) || isBlank(d.body)).map((d) => d.id)).toEqual([]);
    }
  });

  test('cranfield and agent-memory load as before', () => {
    expect([sets.cranfield.docs.length, sets.cranfield.queries.length, sets.cranfield.skipped]).toEqual([1398, 225, ['471', '995']]);
    expect([sets.agentMemory.docs.length, sets.agentMemory.queries.length, judgedQueries(sets.agentMemory)]).toEqual([375, 71, 61]);
  });

  test('agent-memory: the first 358 records, 55 queries and 332 judgment lines are those the set was judged with', () => {
    const set = sets.agentMemory;
    expect(set.docs.slice(0, 358).map((d) => d.id)).toEqual(Array.from({ length: 358 }, (_, i) => `am-${String(i + 1).padStart(3, '0')}`));
    const old = [...set.qrels.entries()].filter(([qid]) => Number(qid.slice(1)) <= 55);
    expect(old.reduce((n, [, j]) => n + j.size, 0)).toBe(332);
    // The added records are judged for added queries only.
    const added = new Set(set.docs.slice(358).map((d) => d.id));
    expect(old.every(([, j]) => [...j.keys()].every((id) => !added.has(id)))).toBe(true);
  });

  test('agent-memory: ten unanswerable queries, with no judgment at all', () => {
    const none = sets.agentMemory.queries.filter((q) => (sets.agentMemory.qrels.get(q.qid)?.size ?? 0) === 0).map((q) => q.qid);
    expect(none).toEqual(['q52', 'q53', 'q54', 'q55', 'q66', 'q67', 'q68', 'q69', 'q70', 'q71']);
  });

  test('agent-memory: an identifier lookup has one relevant record, the only one holding the identifier exactly', () => {
    const set = sets.agentMemory;
    const lookups = set.queries.filter((q) => /^[\w./-]+$/.test(q.q) && /[-_./]/.test(q.q) && (set.qrels.get(q.qid)?.size ?? 0) > 0);
    expect(lookups.map((q) => q.qid)).toEqual(['q56', 'q57', 'q58', 'q59', 'q60', 'q61']);
    for (const q of lookups) {
      // Exactly: not as a part of a longer identifier (v1.2.3 in v1.2.34, retry.ts in retry.tsx).
      const exact = new RegExp(`(^|[^\\w./-])${q.q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\w/-]|\\.(\\s|$))`);
      const holders = set.docs.filter((d) => exact.test(`${d.title} ${d.body}`)).map((d) => d.id);
      expect([...set.qrels.get(q.qid)!.keys()]).toEqual(holders);
      expect(holders).toHaveLength(1);
    }
  });

  test('agent-questions: the records and judgments of agent-memory, each query with its qid and filters and a new text', () => {
    const memory = sets.agentMemory;
    const questions = sets.agentQuestions;
    expect(questions.name).toBe('agent-questions');
    expect(questions.docs).toEqual(memory.docs);
    expect(questions.qrels).toEqual(memory.qrels);
    expect(questions.queries.map((q) => q.qid)).toEqual(memory.queries.map((q) => q.qid));
    expect(questions.queries.map((q) => q.filters)).toEqual(memory.queries.map((q) => q.filters));
    for (const [i, q] of questions.queries.entries()) {
      expect(q.q).not.toBe(memory.queries[i]!.q);
      expect(q.q).not.toContain('"');
      expect(isBlank(q.q)).toBe(false);
    }
    expect(judgedQueries(questions)).toBe(61);
  });
});
