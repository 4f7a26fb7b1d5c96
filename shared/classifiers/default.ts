import type { Classifier } from '../ports.js';
import { LinearClassifier } from './linear/model.js';
import { TYPE_MODEL } from './linear/type-model.generated.js';

/** The classifier both paths use (`POST /v1/classify` and the background worker): the shipped linear model. */
export const defaultClassifier: Classifier = new LinearClassifier(TYPE_MODEL);
