import { RECORD_TYPES, type RecordType } from '../../domain/record.js';
import type { Classifier, Suggestion } from '../../ports.js';
import { contentWords, features, vectorize, type FeatureGroup } from './features.js';

// Bound once: where modules run in a vm context (Jest), each lookup of the global `Math` is a slow
// interceptor call, and calibrating the model calls these functions millions of times.
const { exp, log, max } = Math;

/**
 * A trained linear model as it ships: the vocabulary, one weight per (type, feature) plus a bias per type,
 * and the calibration temperature. Weights travel as base64 of little-endian float32, which keeps the file
 * small and its load fast.
 */
export interface SerializedLinearModel {
  name: string;
  types: readonly RecordType[];
  /** The groups of features the model was trained on (features.ts describes each). */
  features: readonly FeatureGroup[];
  /** The features, joined by "\n"; a feature's position is its column. */
  vocabulary: string;
  /** types.length × vocabulary size weights, row by type, then types.length biases. */
  weights: string;
  /** Softmax temperature fitted on held-out predictions, so that a confidence of 0.9 is right about 90 % of the time. */
  temperature: number;
  /** The share of each type in the training split, in `types` order: the answer to an input that shows nothing. */
  prior: readonly number[];
  /**
   * The evidence gate: with n known content words the model's own scores weigh n / (n + gate) against the
   * prior (see `gatedProbabilities`). Fitted with the temperature on the same held-out predictions.
   */
  gate: number;
}

/** A multinomial logistic regression over word, bigram and shape features, calibrated by temperature and an evidence gate. */
export class LinearClassifier implements Classifier {
  private readonly vocabulary: Map<string, number>;
  private readonly weights: Float32Array;
  private readonly types: readonly RecordType[];

  constructor(private readonly model: SerializedLinearModel) {
    const words = model.vocabulary.split('\n');
    this.vocabulary = new Map(words.map((w, i) => [w, i]));
    const bytes = Buffer.from(model.weights, 'base64');
    this.weights = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    this.types = model.types;
    if (this.weights.length !== this.types.length * (words.length + 1)) throw new Error(`model ${model.name}: weights do not fit the vocabulary`);
  }

  /** The raw score of each type (before the temperature), in the model's type order. */
  logits(input: { title: string; body: string }): number[] {
    const { index, value } = vectorize(features(input, this.model.features), this.vocabulary);
    const size = this.vocabulary.size;
    const biasAt = this.types.length * size;
    return this.types.map((_, k) => {
      let z = this.weights[biasAt + k]!;
      for (let j = 0; j < index.length; j++) z += this.weights[k * size + index[j]!]! * value[j]!;
      return z;
    });
  }

  /** How many of the input's content words (features.ts) the model knows: the evidence the gate weighs. */
  evidence(input: { title: string; body: string }): number {
    let known = 0;
    for (const word of contentWords(input)) if (this.vocabulary.has(word)) known++;
    return known;
  }

  /** The calibrated probability of each type, in the model's type order. */
  probabilities(input: { title: string; body: string }): number[] {
    const { temperature, prior, gate } = this.model;
    return gatedProbabilities(this.logits(input), this.evidence(input), { temperature, prior, gate });
  }

  async classify(input: { title: string; body: string }): Promise<Suggestion> {
    const p = this.probabilities(input);
    const scores = Object.fromEntries(RECORD_TYPES.map((t) => [t, p[this.types.indexOf(t)] ?? 0])) as Record<RecordType, number>;
    // Ties go to the type listed first, so the answer is deterministic.
    const type = RECORD_TYPES.reduce((best, t) => (scores[t] > scores[best] ? t : best), RECORD_TYPES[0]);
    return { type, confidence: scores[type], scores, model: this.model.name };
  }
}

/** Softmax of logits divided by a temperature: above 1 flattens the probabilities, below 1 sharpens them. */
export function softmax(logits: number[], temperature: number): number[] {
  const scaled = logits.map((z) => z / temperature);
  const top = max(...scaled);
  const exps = scaled.map((z) => exp(z - top));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
}

/**
 * The calibrated probabilities: the tempered softmax of the logits pooled geometrically with the prior,
 * p ∝ softmax(logits / temperature)^g · prior^(1 − g) with g = evidence / (evidence + gate). With no known
 * content word the answer is the prior; with many it is the tempered softmax. A gate of 0 turns pooling off.
 */
export function gatedProbabilities(logits: number[], evidence: number, calibration: { temperature: number; prior: readonly number[]; gate: number }): number[] {
  const { temperature, prior, gate } = calibration;
  const g = gate > 0 ? evidence / (evidence + gate) : 1;
  // The linear model's scores do not shrink with the input (features are L2-normalized), so two stray
  // features score as loudly as a paragraph; weighing them by evidence puts back what normalizing took.
  return softmax(logits.map((z, k) => (g * z) / temperature + (1 - g) * log(max(1e-12, prior[k]!))), 1);
}
