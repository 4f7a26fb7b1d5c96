import { score, summarizeConfidence, type Prediction } from '../../bench/classifier/metrics.js';

describe('classifier evaluation metrics', () => {
  test('accuracy, per-type F1, macro F1 and the confusion matrix on a worked example', () => {
    const p = (truth: Prediction['truth'], predicted: Prediction['predicted'], confidence = 0.5): Prediction => ({ truth, predicted, confidence });
    // fact: 2 right, 1 called decision; decision: 1 right, 1 called fact. Others absent.
    const r = score([p('fact', 'fact'), p('fact', 'fact'), p('fact', 'decision'), p('decision', 'decision'), p('decision', 'fact')]);
    expect(r.accuracy).toBeCloseTo(3 / 5);
    expect(r.confusion.fact).toMatchObject({ fact: 2, decision: 1 });
    expect(r.confusion.decision).toMatchObject({ fact: 1, decision: 1 });
    // fact: precision 2/3, recall 2/3 -> F1 2/3; decision: precision 1/2, recall 1/2 -> 1/2; absent types 0.
    expect(r.f1.fact).toBeCloseTo(2 / 3);
    expect(r.f1.decision).toBeCloseTo(1 / 2);
    expect(r.f1.signal).toBe(0);
    expect(r.macroF1).toBeCloseTo((2 / 3 + 1 / 2) / 6);
  });

  test('the reliability table and the calibration error', () => {
    const right = (confidence: number): Prediction => ({ truth: 'fact', predicted: 'fact', confidence });
    const wrong = (confidence: number): Prediction => ({ truth: 'fact', predicted: 'signal', confidence });
    // Bucket 0.9-1.0: four at 0.95, three right (accuracy 0.75). Bucket 0.5-0.6: two at 0.5, one right.
    const r = score([right(0.95), right(0.95), right(0.95), wrong(0.95), right(0.5), wrong(0.5), right(1)]);
    const top = r.buckets[9]!;
    expect(top).toMatchObject({ count: 5 });
    expect(top.meanConfidence).toBeCloseTo((0.95 * 4 + 1) / 5);
    expect(top.accuracy).toBeCloseTo(4 / 5);
    expect(r.buckets[5]).toMatchObject({ count: 2, accuracy: 0.5 });
    expect(r.buckets.reduce((s, b) => s + b.count, 0)).toBe(7);
    expect(r.ece).toBeCloseTo((5 / 7) * Math.abs(top.meanConfidence - 0.8) + (2 / 7) * 0);
  });

  test('the confidence summary of inputs with no right type: mean, max and the share strictly above the bound', () => {
    const c = summarizeConfidence([0.2, 0.5, 0.8, 0.3]);
    expect(c).toMatchObject({ count: 4, max: 0.8, above: 0.25, bound: 0.5 });
    expect(c.mean).toBeCloseTo(0.45);
    expect(summarizeConfidence([]).mean).toBe(0);
  });
});
