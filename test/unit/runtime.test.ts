import { classifyByKeywords } from '../../shared/classifiers/keyword-baseline.js';
import { RECORD_TYPES } from '../../shared/domain/record.js';
import { TokenBuckets } from '../../local/token-bucket.js';

describe('token bucket', () => {
  test('allows the burst, then refills at the rate', () => {
    let now = 0;
    const buckets = new TokenBuckets(() => now);
    for (let i = 0; i < 3; i++) expect(buckets.take('k', 2, 3)).toEqual({ ok: true });
    expect(buckets.take('k', 2, 3)).toEqual({ ok: false, retryAfter: 1 });
    expect(buckets.take('other', 2, 3)).toEqual({ ok: true });
    now += 500;
    expect(buckets.take('k', 2, 3)).toEqual({ ok: true });
    expect(buckets.take('k', 2, 3).ok).toBe(false);
  });

  test('retry_after is the whole seconds until a token is back', () => {
    let now = 0;
    const buckets = new TokenBuckets(() => now);
    expect(buckets.take('k', 0.1, 1).ok).toBe(true);
    now += 1000;
    expect(buckets.take('k', 0.1, 1)).toEqual({ ok: false, retryAfter: 9 });
  });
});

describe('keyword baseline classifier', () => {
  test('scores every type in 0..1, summing to 1, deterministically', () => {
    const s = classifyByKeywords({ title: 'We decided to adopt Postgres', body: 'Chosen after the review' });
    expect(s.type).toBe('decision');
    expect(Object.keys(s.scores).sort()).toEqual([...RECORD_TYPES].sort());
    expect(Object.values(s.scores).reduce((a, b) => a + b, 0)).toBeCloseTo(1);
    expect(s.confidence).toBe(s.scores.decision);
    expect(classifyByKeywords({ title: 'We decided to adopt Postgres', body: 'Chosen after the review' })).toEqual(s);
  });

  test('with no cue every type scores the same', () => {
    const s = classifyByKeywords({ title: 'zzz', body: 'qqq' });
    for (const t of RECORD_TYPES) expect(s.scores[t]).toBeCloseTo(1 / 6);
  });
});
