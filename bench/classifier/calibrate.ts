import { LinearClassifier, softmax, type SerializedLinearModel } from '../../shared/classifiers/linear/model.js';
import { RECORD_TYPES } from '../../shared/domain/record.js';
import type { Example } from './dataset.js';
import { trainLinear, type Trained, type TrainOptions } from './train-linear.js';

/** A trained model in the shipped form, with its temperature. */
export function serialize(name: string, trained: Trained, temperature: number): SerializedLinearModel {
  return {
    name,
    types: RECORD_TYPES,
    features: trained.features,
    vocabulary: trained.vocabulary.join('\n'),
    weights: Buffer.from(trained.weights.buffer, trained.weights.byteOffset, trained.weights.byteLength).toString('base64'),
    temperature,
  };
}

/** One held-out prediction of cross-validation: the raw scores and the index of the true type. */
export interface HeldOut {
  logits: number[];
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
    const model = new LinearClassifier(serialize('cv', trainLinear(train, options), 1));
    for (const e of test) heldOut.push({ logits: model.logits(e), label: RECORD_TYPES.indexOf(e.type) });
  }
  return heldOut;
}

/**
 * The temperature that makes held-out confidences honest: the one minimizing the negative log-likelihood
 * of the cross-validated predictions over the training examples, found by golden-section search. The test
 * split is never touched.
 */
export function fitTemperature(examples: Example[], options: TrainOptions): number {
  const heldOut = crossValidate(examples, options);
  const nll = (t: number) => -heldOut.reduce((sum, h) => sum + Math.log(Math.max(1e-12, softmax(h.logits, t)[h.label]!)), 0);
  let [lo, hi] = [0.05, 5];
  const phi = (Math.sqrt(5) - 1) / 2;
  for (let i = 0; i < 40; i++) {
    const a = hi - phi * (hi - lo);
    const b = lo + phi * (hi - lo);
    if (nll(a) < nll(b)) hi = b;
    else lo = a;
  }
  return (lo + hi) / 2;
}
