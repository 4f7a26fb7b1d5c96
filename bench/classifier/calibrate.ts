import { gatedProbabilities, LinearClassifier, type SerializedLinearModel } from '../../shared/classifiers/linear/model.js';
import { RECORD_TYPES } from '../../shared/domain/record.js';
import type { Example } from './dataset.js';
import { trainLinear, type Trained, type TrainOptions } from './train-linear.js';

// Bound once, as in model.ts: the negative log-likelihood below runs about a million times per fit.
const { log, max } = Math;

/** What turns a model's raw scores into honest probabilities (model.ts, `gatedProbabilities`). */
export interface Calibration {
  temperature: number;
  prior: number[];
  gate: number;
}

/** Raw scores as they are: what cross-validation needs before anything is fitted. */
const UNCALIBRATED: Calibration = { temperature: 1, prior: RECORD_TYPES.map(() => 1 / RECORD_TYPES.length), gate: 0 };

/** A trained model in the shipped form, with its calibration. */
export function serialize(name: string, trained: Trained, calibration: Calibration): SerializedLinearModel {
  return {
    name,
    types: RECORD_TYPES,
    features: trained.features,
    vocabulary: trained.vocabulary.join('\n'),
    weights: Buffer.from(trained.weights.buffer, trained.weights.byteOffset, trained.weights.byteLength).toString('base64'),
    temperature: calibration.temperature,
    prior: calibration.prior,
    gate: calibration.gate,
  };
}

/** One held-out prediction of cross-validation: the raw scores, the known content words and the index of the true type. */
export interface HeldOut {
  logits: number[];
  evidence: number;
  label: number;
}

/**
 * k-fold cross-validation over training examples: each one gets a prediction from a model that never saw
 * it. Folds are fixed by position, so the same examples and options always give the same predictions.
 */
export function crossValidate(examples: Example[], options: TrainOptions, folds = 5): HeldOut[] {
  const heldOut: HeldOut[] = [];
  for (let f = 0; f < folds; f++) {
    const train = examples.filter((_, i) => i % folds !== f);
    const test = examples.filter((_, i) => i % folds === f);
    const model = new LinearClassifier(serialize('cv', trainLinear(train, options), UNCALIBRATED));
    for (const e of test) heldOut.push({ logits: model.logits(e), evidence: model.evidence(e), label: RECORD_TYPES.indexOf(e.type) });
  }
  return heldOut;
}

/** The share of each type among the examples, in RECORD_TYPES order. */
export function typePrior(examples: Example[]): number[] {
  return RECORD_TYPES.map((t) => examples.filter((e) => e.type === t).length / examples.length);
}

/**
 * The calibration that makes held-out confidences honest: the temperature and the evidence gate that
 * minimize the negative log-likelihood of the cross-validated predictions over the training examples
 * (the gate only when `gate` is true; otherwise the temperature alone, as linear-v2 was calibrated).
 * The test split is never touched, and neither are the no-signal inputs: the gate is earned on real records.
 */
export function fitCalibration(examples: Example[], options: TrainOptions, { gate = true } = {}): Calibration {
  // Without the words group no content word is ever known, and a gate would answer the prior to everything.
  return fitOnHeldOut(crossValidate(examples, options), typePrior(examples), { gate: gate && options.features.includes('words') });
}

/** `fitCalibration` on held-out predictions already made (eval.ts reuses its cross-validation). */
export function fitOnHeldOut(heldOut: HeldOut[], prior: number[], { gate = true } = {}): Calibration {
  const nll = (c: Calibration) =>
    -heldOut.reduce((sum, h) => sum + log(max(1e-12, gatedProbabilities(h.logits, h.evidence, c)[h.label]!)), 0);
  const bestTemperature = (g: number) => minimize((t) => nll({ temperature: t, prior, gate: g }), 0.05, 5, 30);
  // Nested one-dimensional searches: each gate gets its own best temperature, as the two trade off. Fewer
  // steps outside keep training fast; the gate is then known to within 0.001, far below what it changes.
  const g = gate ? minimize((x) => nll({ temperature: bestTemperature(x), prior, gate: x }), 0, 50, 25) : 0;
  return { temperature: bestTemperature(g), prior, gate: g };
}

/** The minimum of a function over [lo, hi] by golden-section search (to within (hi − lo) · 0.618^steps for a unimodal function). */
function minimize(f: (x: number) => number, lo: number, hi: number, steps = 40): number {
  const phi = (Math.sqrt(5) - 1) / 2;
  for (let i = 0; i < steps; i++) {
    const a = hi - phi * (hi - lo);
    const b = lo + phi * (hi - lo);
    if (f(a) < f(b)) hi = b;
    else lo = a;
  }
  return (lo + hi) / 2;
}
