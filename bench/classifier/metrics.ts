import { RECORD_TYPES, type RecordType } from '../../shared/domain/record.js';

/** One prediction to score: the true type, the predicted one, and the confidence given. */
export interface Prediction {
  truth: RecordType;
  predicted: RecordType;
  confidence: number;
}

/** One confidence bucket of a reliability table. */
export interface Bucket {
  from: number;
  to: number;
  count: number;
  meanConfidence: number;
  accuracy: number;
}

export interface Report {
  accuracy: number;
  macroF1: number;
  f1: Record<RecordType, number>;
  /** confusion[truth][predicted] = count. */
  confusion: Record<RecordType, Record<RecordType, number>>;
  buckets: Bucket[];
  /** Expected calibration error: the count-weighted mean gap between confidence and accuracy over the buckets. */
  ece: number;
}

/** Accuracy, per-type and macro F1, the confusion matrix and a reliability table in ten buckets of confidence. */
export function score(predictions: Prediction[]): Report {
  const zero = () => Object.fromEntries(RECORD_TYPES.map((t) => [t, 0])) as Record<RecordType, number>;
  const confusion = Object.fromEntries(RECORD_TYPES.map((t) => [t, zero()])) as Report['confusion'];
  for (const p of predictions) confusion[p.truth][p.predicted]++;
  const f1 = zero();
  for (const t of RECORD_TYPES) {
    const tp = confusion[t][t];
    const predicted = RECORD_TYPES.reduce((s, u) => s + confusion[u][t], 0);
    const actual = RECORD_TYPES.reduce((s, u) => s + confusion[t][u], 0);
    const precision = predicted === 0 ? 0 : tp / predicted;
    const recall = actual === 0 ? 0 : tp / actual;
    f1[t] = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  }
  const correct = predictions.filter((p) => p.truth === p.predicted).length;
  const buckets: Bucket[] = Array.from({ length: 10 }, (_, i) => {
    const from = i / 10;
    const to = (i + 1) / 10;
    const inside = predictions.filter((p) => p.confidence >= from && (i === 9 ? p.confidence <= to : p.confidence < to));
    return {
      from,
      to,
      count: inside.length,
      meanConfidence: inside.length === 0 ? 0 : inside.reduce((s, p) => s + p.confidence, 0) / inside.length,
      accuracy: inside.length === 0 ? 0 : inside.filter((p) => p.truth === p.predicted).length / inside.length,
    };
  });
  const n = predictions.length;
  return {
    accuracy: n === 0 ? 0 : correct / n,
    macroF1: RECORD_TYPES.reduce((s, t) => s + f1[t], 0) / RECORD_TYPES.length,
    f1,
    confusion,
    buckets,
    ece: n === 0 ? 0 : buckets.reduce((s, b) => s + (b.count / n) * Math.abs(b.meanConfidence - b.accuracy), 0),
  };
}

/** How sure a model is over inputs that have no right type: the mean and the largest confidence, and the share above a bound. */
export interface ConfidenceSummary {
  count: number;
  mean: number;
  max: number;
  /** The share of confidences strictly above `bound`. */
  above: number;
  bound: number;
}

/** The summary of a list of confidences; 0.5 is the bound docs/api.md gives for "the model does not know". */
export function summarizeConfidence(confidences: number[], bound = 0.5): ConfidenceSummary {
  const n = confidences.length;
  return {
    count: n,
    mean: n === 0 ? 0 : confidences.reduce((s, c) => s + c, 0) / n,
    max: n === 0 ? 0 : Math.max(...confidences),
    above: n === 0 ? 0 : confidences.filter((c) => c > bound).length / n,
    bound,
  };
}
