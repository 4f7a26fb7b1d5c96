import { fileURLToPath } from 'node:url';
import { classifyByKeywords } from '../../shared/classifiers/keyword-baseline.js';
import { FEATURE_GROUPS } from '../../shared/classifiers/linear/features.js';
import { LinearClassifier, softmax } from '../../shared/classifiers/linear/model.js';
import { TYPE_MODEL } from '../../shared/classifiers/linear/type-model.generated.js';
import { RECORD_TYPES } from '../../shared/domain/record.js';
import { crossValidate } from './calibrate.js';
import { loadExamples } from './dataset.js';
import { score, type Prediction, type Report } from './metrics.js';
import { replaceGeneratedSection } from '../support/doc-section.js';
import { measureSpeed } from './speed.js';
import { DEFAULT_TRAINING, type TrainOptions } from './train-linear.js';

/**
 * `npm run eval:classifier`: scores the shipped linear classifier (trained on the training split by
 * `npm run train:classifier`) and the keyword baseline on the held-out test split, in the same run; shows
 * by cross-validation on the training split what each group of features adds; and times the classifier in
 * process, through the local server and at cold start. Prints the figures and writes them into the
 * generated part of docs/classifier.md.
 */
const progress = (line: string) => process.stderr.write(`${line}\n`);

const examples = loadExamples();
const train = examples.filter((e) => e.split === 'train');
const test = examples.filter((e) => e.split === 'test');
progress(`data: ${examples.length} labelled examples, ${train.length} train, ${test.length} test`);

// The model that ships (npm run train:classifier writes it; a test fails when it is stale).
const linear = new LinearClassifier(TYPE_MODEL);
const reports: [string, Report][] = [
  [`${TYPE_MODEL.name} (logistic regression, the shipped model)`, score(test.map((e) => predictionOf(e.type, linear.probabilities(e))))],
  ['keyword-baseline-v1', score(test.map((e) => ({ truth: e.type, ...pick(classifyByKeywords(e)) })))],
];

// What each group of features is worth, measured on the training split only.
const ablations: [string, TrainOptions][] = [
  ['all groups (shipped)', DEFAULT_TRAINING],
  ...FEATURE_GROUPS.map((g): [string, TrainOptions] => [`without ${g}`, { ...DEFAULT_TRAINING, features: FEATURE_GROUPS.filter((h) => h !== g) }]),
  ['words only', { ...DEFAULT_TRAINING, features: ['words'] }],
];
const ablationReports = ablations.map(([name, options], i): [string, Report] => {
  progress(`cross-validation ${i + 1}/${ablations.length}: ${name}`);
  return [name, score(crossValidate(train, options).map((h) => predictionOf(RECORD_TYPES[h.label]!, softmax(h.logits, 1))))];
});

const speed = await measureSpeed(test, progress);

function predictionOf(truth: Prediction['truth'], probabilities: number[]): Prediction {
  const best = probabilities.indexOf(Math.max(...probabilities));
  return { truth, predicted: RECORD_TYPES[best]!, confidence: probabilities[best]! };
}
function pick(s: { type: Prediction['predicted']; confidence: number }) {
  return { predicted: s.type, confidence: s.confidence };
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
const fixed = (x: number, digits = 2) => x.toFixed(digits);
const vocabularySize = TYPE_MODEL.vocabulary.split('\n').length;
const lines: string[] = [
  `- Training split: ${train.length} examples; test split: ${test.length} examples (held out, never used to tune).`,
  `- ${TYPE_MODEL.name}: multinomial logistic regression over the feature groups ${TYPE_MODEL.features.join(', ')};`,
  `  ${vocabularySize} features (seen in at least ${DEFAULT_TRAINING.minDocumentFrequency} training examples), L2 ${DEFAULT_TRAINING.l2},`,
  `  ${DEFAULT_TRAINING.epochs} epochs of Adam; softmax temperature ${TYPE_MODEL.temperature.toFixed(3)}, fitted by 5-fold cross-validation on the training split.`,
  '',
  '### Summary (test split)',
  '',
  '| Model | Accuracy | Macro F1 | Calibration error (ECE) |',
  '|---|---|---|---|',
  ...reports.map(([name, r]) => `| ${name} | ${pct(r.accuracy)} | ${r.macroF1.toFixed(3)} | ${r.ece.toFixed(3)} |`),
  '',
  '### Speed',
  '',
  '| What | Figure |',
  '|---|---|',
  `| One classification in process (${speed.inProcess.calls} calls) | p50 ${fixed(speed.inProcess.p50Us, 0)} µs, p99 ${fixed(speed.inProcess.p99Us, 0)} µs |`,
  `| \`POST /v1/classify\` through the local server, one at a time (${speed.http.requests} requests) | p50 ${fixed(speed.http.p50Ms)} ms, p99 ${fixed(speed.http.p99Ms)} ms |`,
  `| Cold start: load the model (bundled alone, ${Math.round(speed.coldStart.modelBytes / 1000)} kB) in a fresh \`node\`, median of ${speed.coldStart.runs} | ${fixed(speed.coldStart.modelMs, 1)} ms |`,
  `| Cold start: load the whole classify Lambda bundle (${Math.round(speed.coldStart.lambdaBytes / 1000)} kB) in a fresh \`node\`, median of ${speed.coldStart.runs} | ${fixed(speed.coldStart.lambdaMs, 1)} ms |`,
  '',
  '### What each group of features adds (5-fold cross-validation on the training split)',
  '',
  '| Features | Accuracy | Macro F1 |',
  '|---|---|---|',
  ...ablationReports.map(([name, r]) => `| ${name} | ${pct(r.accuracy)} | ${r.macroF1.toFixed(3)} |`),
  '',
];
for (const [name, r] of reports) {
  lines.push(`### ${name}`, '', '| Type | F1 |', '|---|---|', ...RECORD_TYPES.map((t) => `| ${t} | ${r.f1[t].toFixed(3)} |`), '');
  lines.push('Confusion matrix (rows: true type, columns: predicted):', '', `| | ${RECORD_TYPES.join(' | ')} |`, `|---|${RECORD_TYPES.map(() => '---').join('|')}|`);
  for (const t of RECORD_TYPES) lines.push(`| **${t}** | ${RECORD_TYPES.map((u) => r.confusion[t][u]).join(' | ')} |`);
  lines.push('', 'Reliability (is a confidence of x right x of the time?):', '', '| Confidence | Predictions | Mean confidence | Accuracy |', '|---|---|---|---|');
  for (const b of r.buckets) {
    if (b.count > 0) lines.push(`| ${b.from.toFixed(1)}–${b.to.toFixed(1)} | ${b.count} | ${b.meanConfidence.toFixed(2)} | ${b.accuracy.toFixed(2)} |`);
  }
  lines.push('');
}
const generated = lines.join('\n');
process.stdout.write(`${generated}\n`);

// Only the part between the markers is generated; the prose around it is written by hand.
replaceGeneratedSection(fileURLToPath(new URL('../../docs/classifier.md', import.meta.url)), 'npm run eval:classifier', generated);
progress('wrote the generated part of docs/classifier.md');
