import { fileURLToPath } from 'node:url';
import { classifyByKeywords } from '../../shared/classifiers/keyword-baseline.js';
import { FEATURE_GROUPS } from '../../shared/classifiers/linear/features.js';
import { LinearClassifier, softmax, type SerializedLinearModel } from '../../shared/classifiers/linear/model.js';
import { TYPE_MODEL } from '../../shared/classifiers/linear/type-model.generated.js';
import { RECORD_TYPES } from '../../shared/domain/record.js';
import { crossValidate, fitOnHeldOut, typePrior } from './calibrate.js';
import { loadExamples } from './dataset.js';
import { score, summarizeConfidence, type ConfidenceSummary, type Prediction, type Report } from './metrics.js';
import { NO_SIGNAL_KINDS, NO_SIGNAL_SEED, noSignalInputs, type NoSignalInput } from './no-signal.js';
import { replaceGeneratedSection } from '../support/doc-section.js';
import { measureSpeed } from './speed.js';
import { DEFAULT_TRAINING, type TrainOptions } from './train-linear.js';

/**
 * `npm run eval:classifier`: scores the shipped linear classifier (trained on the training split by
 * `npm run train:classifier`) and the keyword baseline on the held-out test split, in the same run; shows
 * by cross-validation on the training split what each group of features adds; measures how sure each is on
 * generated inputs with no signal (bench/classifier/no-signal.ts); and times the classifier in process,
 * through the local server and at cold start. Prints the figures and writes them into the generated part
 * of docs/classifier.md.
 */
const progress = (line: string) => process.stderr.write(`${line}\n`);

const examples = loadExamples();
const train = examples.filter((e) => e.split === 'train');
const test = examples.filter((e) => e.split === 'test');
progress(`data: ${examples.length} labelled examples, ${train.length} train, ${test.length} test`);

// What each group of features is worth, measured on the training split only.
const ablations: [string, TrainOptions][] = [
  ['all groups (shipped)', DEFAULT_TRAINING],
  ...FEATURE_GROUPS.map((g): [string, TrainOptions] => [`without ${g}`, { ...DEFAULT_TRAINING, features: FEATURE_GROUPS.filter((h) => h !== g) }]),
  ['words only', { ...DEFAULT_TRAINING, features: ['words'] }],
];
const heldOuts = ablations.map(([name, options], i) => {
  progress(`cross-validation ${i + 1}/${ablations.length}: ${name}`);
  return crossValidate(train, options);
});
const ablationReports = heldOuts.map((heldOut, i): [string, Report] => [ablations[i]![0], score(heldOut.map((h) => predictionOf(RECORD_TYPES[h.label]!, softmax(h.logits, 1))))]);

// The model that ships (npm run train:classifier writes it; a test fails when it is stale), and the same
// weights calibrated by the temperature alone, as linear-v2 was: what the evidence gate changes.
const temperatureOnly: SerializedLinearModel = { ...TYPE_MODEL, ...fitOnHeldOut(heldOuts[0]!, typePrior(train), { gate: false }) };
const models: [string, (input: { title: string; body: string }) => { type: Prediction['predicted']; confidence: number }][] = [
  [`${TYPE_MODEL.name} (logistic regression, the shipped model)`, linearAnswer(new LinearClassifier(TYPE_MODEL))],
  [`same weights, temperature ${temperatureOnly.temperature.toFixed(3)} only, no evidence gate (as linear-v2)`, linearAnswer(new LinearClassifier(temperatureOnly))],
  ['keyword-baseline-v1', classifyByKeywords],
];
const reports = models.map(([name, answer]): [string, Report] => [name, score(test.map((e) => ({ truth: e.type, ...pick(answer(e)) })))]);
const detailed = reports.filter((_, i) => i !== 1);

// Inputs with no evidence of any type: no label, so the only measure is how sure the model is.
const noSignal = noSignalInputs(NO_SIGNAL_SEED);
const noSignalReports = models.map(([name, answer]): [string, ConfidenceSummary] => [name, summarizeConfidence(noSignal.map((e) => answer(e).confidence))]);
const shipped = models[0]![1];
const byKind = NO_SIGNAL_KINDS.map((kind): [string, ConfidenceSummary] => [kind, summarizeConfidence(noSignal.filter((e) => e.kind === kind).map((e) => shipped(e).confidence))]);
// Many seeds show the tail one set of a few hundred can miss.
const SEEDS = 30;
const many = Array.from({ length: SEEDS }, (_, i) => noSignalInputs(i + 1)).flat().map((e) => ({ e, confidence: shipped(e).confidence }));
const manySeeds = summarizeConfidence(many.map((m) => m.confidence));
const worst: NoSignalInput = many.reduce((a, b) => (b.confidence > a.confidence ? b : a)).e;
const ISSUE_CASES = [['!!!', '???'], ['a', 'b'], ['asdf', 'qwerty']] as const;

const speed = await measureSpeed(test, progress);

function linearAnswer(model: LinearClassifier) {
  return (input: { title: string; body: string }) => {
    const p = model.probabilities(input);
    const best = p.indexOf(Math.max(...p));
    return { type: RECORD_TYPES[best]!, confidence: p[best]! };
  };
}
function predictionOf(truth: Prediction['truth'], probabilities: number[]): Prediction {
  const best = probabilities.indexOf(Math.max(...probabilities));
  return { truth, predicted: RECORD_TYPES[best]!, confidence: probabilities[best]! };
}
function pick(s: { type: Prediction['predicted']; confidence: number }) {
  return { predicted: s.type, confidence: s.confidence };
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
const fixed = (x: number, digits = 2) => x.toFixed(digits);
const answerText = (a: { type: string; confidence: number }) => `${a.type} ${fixed(a.confidence)}`;
const vocabularySize = TYPE_MODEL.vocabulary.split('\n').length;
const lines: string[] = [
  `- Training split: ${train.length} examples; test split: ${test.length} examples (held out, never used to tune).`,
  `- ${TYPE_MODEL.name}: multinomial logistic regression over the feature groups ${TYPE_MODEL.features.join(', ')};`,
  `  ${vocabularySize} features (seen in at least ${DEFAULT_TRAINING.minDocumentFrequency} training examples), L2 ${DEFAULT_TRAINING.l2},`,
  `  ${DEFAULT_TRAINING.epochs} epochs of Adam; softmax temperature ${TYPE_MODEL.temperature.toFixed(3)} and evidence gate ${TYPE_MODEL.gate.toFixed(2)},`,
  '  fitted together by 5-fold cross-validation on the training split.',
  '',
  '### Summary (test split)',
  '',
  '| Model | Accuracy | Macro F1 | Calibration error (ECE) |',
  '|---|---|---|---|',
  ...reports.map(([name, r]) => `| ${name} | ${pct(r.accuracy)} | ${r.macroF1.toFixed(3)} | ${r.ece.toFixed(3)} |`),
  '',
  `### Inputs with no signal (${noSignal.length} generated by bench/classifier/no-signal.ts, seed ${NO_SIGNAL_SEED})`,
  '',
  `No label is right for them, so the measure is how sure each model is; the largest type prior is ${fixed(Math.max(...TYPE_MODEL.prior), 3)}, and below 0.5 a model "does not know".`,
  '',
  '| Model | Mean confidence | Max confidence | Share above 0.5 |',
  '|---|---|---|---|',
  ...noSignalReports.map(([name, c]) => `| ${name} | ${fixed(c.mean, 3)} | ${fixed(c.max, 3)} | ${pct(c.above)} |`),
  '',
  `${TYPE_MODEL.name} by kind:`,
  '',
  '| Kind | Inputs | Mean confidence | Max confidence |',
  '|---|---|---|---|',
  ...byKind.map(([kind, c]) => `| ${kind} | ${c.count} | ${fixed(c.mean, 3)} | ${fixed(c.max, 3)} |`),
  '',
  `Over seeds 1 to ${SEEDS} (${manySeeds.count} inputs), ${TYPE_MODEL.name} gives a mean confidence of ${fixed(manySeeds.mean, 3)}, at most ${fixed(manySeeds.max, 3)},`,
  `and ${pct(manySeeds.above)} above 0.5; the most confident answer is to \`${JSON.stringify({ title: worst.title, body: worst.body })}\` (${worst.kind}).`,
  '',
  "The inputs of the issue, answered by the shipped model and by the same weights calibrated by the temperature alone:",
  '',
  '| Title | Body | Shipped | Temperature only |',
  '|---|---|---|---|',
  ...ISSUE_CASES.map(([title, body]) => `| \`${title}\` | \`${body}\` | ${answerText(models[0]![1]({ title, body }))} | ${answerText(models[1]![1]({ title, body }))} |`),
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
for (const [name, r] of detailed) {
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
