import { describe, expect, test } from '@jest/globals';
import { drawDistinct, drawMany, queryableWords, queryFrom, residentMiB, seededRandom } from '../../bench/support/tenant-queries.js';

describe('the tenant benchmark helpers', () => {
  test('queryable words drop stop words, short words, digits and punctuation, and repeats', () => {
    expect(queryableWords('The invoice for ACME, and the 2nd invoice: re-sent to Zoë on 12/03')).toEqual(['invoice', 'acme', 'sent', 'zoë']);
    expect(queryableWords('it is of an 42')).toEqual([]);
  });

  test('a query has 1 to 3 distinct words of the text, and is deterministic for a seed', () => {
    const text = 'Customer reported billing failures after the firmware upgrade on router fleet';
    const words = new Set(queryableWords(text));
    const rng = seededRandom(7);
    const counts = new Set<number>();
    for (let i = 0; i < 300; i++) {
      const q = queryFrom(text, rng)!.split(' ');
      counts.add(q.length);
      expect(new Set(q).size).toBe(q.length);
      for (const w of q) expect(words.has(w)).toBe(true);
    }
    expect([...counts].sort()).toEqual([1, 2, 3]);
    const a = seededRandom(3);
    const b = seededRandom(3);
    expect(Array.from({ length: 20 }, () => queryFrom(text, a))).toEqual(Array.from({ length: 20 }, () => queryFrom(text, b)));
  });

  test('a query of a text with fewer usable words uses what there is; none gives null', () => {
    expect(queryFrom('the router', seededRandom(1))).toBe('router');
    expect(queryFrom('of it 12', seededRandom(1))).toBeNull();
  });

  test('draws: with replacement from the list, and distinct without', () => {
    const rng = seededRandom(5);
    const items = Array.from({ length: 50 }, (_, i) => i);
    const many = drawMany(items, 1000, rng);
    expect(many).toHaveLength(1000);
    expect(many.every((x) => x >= 0 && x < 50)).toBe(true);
    const distinct = drawDistinct(items, 30, rng);
    expect(new Set(distinct).size).toBe(30);
    expect(drawDistinct(items, 80, rng).sort((x, y) => x - y)).toEqual(items);
    expect(() => drawMany([], 1, rng)).toThrow();
  });

  test('resident memory is read from /proc/<pid>/status in MiB', () => {
    const status = 'Name:\tnode\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nThreads:\t11\n';
    expect(residentMiB(status)).toEqual({ rss: 100, peak: 200 });
    expect(() => residentMiB('Name:\tnode\n')).toThrow();
  });
});
