import { RECORD_TYPES } from '../../shared/domain/record.js';
import { FEATURE_GROUPS, features, vectorize, type FeatureGroup } from '../../shared/classifiers/linear/features.js';
import type { Example } from './dataset.js';

// Bound once: under Jest, whose modules run in a vm context, every lookup of the global `Math` is a slow
// interceptor call, and the training loop below makes tens of millions of them (about 20× slower there).
const { exp, sqrt } = Math;

export interface TrainOptions {
  /** The groups of features to learn from. */
  features: readonly FeatureGroup[];
  /** Features seen in fewer training examples than this are left out. */
  minDocumentFrequency: number;
  /** L2 penalty on the weights (not the biases). */
  l2: number;
  epochs: number;
  learningRate: number;
}

/** Chosen by 5-fold cross-validation on the training split only (docs/classifier.md); the test split is never used to tune. */
export const DEFAULT_TRAINING: TrainOptions = { features: FEATURE_GROUPS, minDocumentFrequency: 2, l2: 3e-5, epochs: 300, learningRate: 0.5 };

/** A trained, uncalibrated model: vocabulary and weights (types × features, then one bias per type). */
export interface Trained {
  features: readonly FeatureGroup[];
  vocabulary: string[];
  weights: Float32Array;
}

/**
 * Multinomial logistic regression by full-batch gradient descent with Adam, from zero weights: the same
 * examples always give the same model, bit for bit.
 */
export function trainLinear(examples: Example[], options: TrainOptions = DEFAULT_TRAINING): Trained {
  const docFreq = new Map<string, number>();
  const featureCounts = examples.map((e) => features(e, options.features));
  for (const counts of featureCounts) for (const f of counts.keys()) docFreq.set(f, (docFreq.get(f) ?? 0) + 1);
  const vocabulary = [...docFreq].filter(([, n]) => n >= options.minDocumentFrequency).map(([f]) => f).sort();
  const index = new Map(vocabulary.map((f, i) => [f, i]));
  const rows = featureCounts.map((counts) => vectorize(counts, index));
  const labels = examples.map((e) => RECORD_TYPES.indexOf(e.type));

  const K = RECORD_TYPES.length;
  const V = vocabulary.length;
  const w = new Float64Array(K * V + K);
  const m = new Float64Array(w.length);
  const v = new Float64Array(w.length);
  const [beta1, beta2, eps] = [0.9, 0.999, 1e-8];
  const n = rows.length;

  for (let epoch = 1; epoch <= options.epochs; epoch++) {
    const grad = new Float64Array(w.length);
    for (let i = 0; i < n; i++) {
      const { index: idx, value } = rows[i]!;
      const logits = new Float64Array(K);
      for (let k = 0; k < K; k++) {
        let z = w[K * V + k]!;
        for (let j = 0; j < idx.length; j++) z += w[k * V + idx[j]!]! * value[j]!;
        logits[k] = z;
      }
      const max = Math.max(...logits);
      let sum = 0;
      for (let k = 0; k < K; k++) sum += (logits[k] = exp(logits[k]! - max));
      for (let k = 0; k < K; k++) {
        const err = logits[k]! / sum - (labels[i] === k ? 1 : 0);
        grad[K * V + k]! += err / n;
        for (let j = 0; j < idx.length; j++) grad[k * V + idx[j]!]! += (err * value[j]!) / n;
      }
    }
    for (let p = 0; p < K * V; p++) grad[p]! += options.l2 * w[p]!;
    const [mBias, vBias, step] = [1 - beta1 ** epoch, 1 - beta2 ** epoch, options.learningRate * 0.1];
    for (let p = 0; p < w.length; p++) {
      const g = grad[p]!;
      m[p] = beta1 * m[p]! + (1 - beta1) * g;
      v[p] = beta2 * v[p]! + (1 - beta2) * g * g;
      w[p]! -= (step * (m[p]! / mBias)) / (sqrt(v[p]! / vBias) + eps);
    }
  }
  return { features: options.features, vocabulary, weights: Float32Array.from(w) };
}
