import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { serialize, type Calibration } from '../../bench/classifier/calibrate.js';
import { modelModule, trainShippedModel } from '../../bench/classifier/train.js';
import { loadExamples } from '../../bench/classifier/dataset.js';
import { DEFAULT_TRAINING, trainLinear } from '../../bench/classifier/train-linear.js';
import { contentWords, features } from '../../shared/classifiers/linear/features.js';
import { gatedProbabilities, LinearClassifier, softmax } from '../../shared/classifiers/linear/model.js';
import { RECORD_TYPES } from '../../shared/domain/record.js';

const options = { ...DEFAULT_TRAINING, epochs: 60 };
const uniform = RECORD_TYPES.map(() => 1 / RECORD_TYPES.length);
const calibration = (temperature: number, gate = 0): Calibration => ({ temperature, prior: uniform, gate });
// A small, fixed slice of the training split keeps this test fast.
const slice = loadExamples().filter((e) => e.split === 'train').slice(0, 240);

describe('the linear type classifier', () => {
  test('features: title and body words and bigrams, kept apart, compatibility forms folded', () => {
    const f = features({ title: 'We chose Ｐostgres', body: "We'll migrate" }, ['words']);
    expect(f.get('t:we')).toBe(1);
    expect(f.get('t:chose postgres')).toBe(1);
    expect(f.get("b:we'll")).toBe(1);
    expect(f.has('b:chose')).toBe(false);
    expect(f.get('we')).toBe(1); // the shared space counts both fields…
    expect(f.has("postgres we'll")).toBe(false); // …but no bigram spans the end of the title and the start of the body
    expect([...f.keys()].every((k) => !k.startsWith('#'))).toBe(true); // only the groups asked for
  });

  test('features: punctuation, value shapes and length buckets', () => {
    const f = features({ title: 'Where is PO 7781?', body: 'Q: where is it?\nA: shipped on 3 May at 08:10 for $40, see JIRA-12.' });
    expect(f.get('t#?')).toBe(1);
    expect(f.get('b#?')).toBe(1);
    expect(f.get('#?')).toBe(2);
    expect(f.get('b#:')).toBe(3);
    expect(f.get('t#digit')).toBe(1);
    for (const shape of ['#money', '#clock', '#date', '#ticket', '#ed']) expect(f.get(shape)).toBe(1);
    expect(f.has('#url')).toBe(false);
    expect(f.get('#tlen0')).toBe(1); // four words
    expect(f.get('#blen1')).toBe(1); // seventeen words: 16 to 30
    expect(f.get('#sent2')).toBe(1);
  });

  test('training is deterministic, and the shipped form round-trips', () => {
    const a = trainLinear(slice, options);
    const b = trainLinear(slice, options);
    expect(Buffer.from(a.weights.buffer).equals(Buffer.from(b.weights.buffer))).toBe(true);
    const model = new LinearClassifier(serialize('linear-test', a, calibration(0.8, 2)));
    const again = new LinearClassifier(JSON.parse(JSON.stringify(serialize('linear-test', a, calibration(0.8, 2)))));
    const input = { title: 'We decided to move the nightly job to 2am', body: 'Agreed in the ops review.' };
    expect(again.probabilities(input)).toEqual(model.probabilities(input));
  });

  test('a suggestion has one score per type summing to 1, the confidence of the best type, and the model name', async () => {
    const model = new LinearClassifier(serialize('linear-test', trainLinear(slice, options), calibration(1)));
    const s = await model.classify({ title: 'Still waiting on the signed contract from Acme', body: 'Follow up on Friday.' });
    expect(Object.keys(s.scores).sort()).toEqual([...RECORD_TYPES].sort());
    expect(Object.values(s.scores).reduce((a, b) => a + b, 0)).toBeCloseTo(1);
    expect(s.confidence).toBe(Math.max(...Object.values(s.scores)));
    expect(s.scores[s.type]).toBe(s.confidence);
    expect(s.model).toBe('linear-test');
  });

  test('the temperature flattens or sharpens without changing the order', () => {
    const logits = [2, 1, 0];
    const cool = softmax(logits, 0.5);
    const warm = softmax(logits, 2);
    expect(cool[0]!).toBeGreaterThan(softmax(logits, 1)[0]!);
    expect(warm[0]!).toBeLessThan(softmax(logits, 1)[0]!);
    expect(warm.indexOf(Math.max(...warm))).toBe(0);
  });

  test('content words: words with at least two letters that are not stop words, once each, from title and body', () => {
    expect([...contentWords({ title: 'A b 42 4k Q3', body: 'The user, the user is ok?' })].sort()).toEqual(['ok', 'user']);
    expect(contentWords({ title: '!!!', body: '12 345 😀' }).size).toBe(0);
    expect([...contentWords({ title: 'Привет', body: 'мир' })].sort()).toEqual(['мир', 'привет']); // any script: knowing them is the vocabulary's business
  });

  test('the evidence gate: the prior with no evidence, the tempered softmax with much, and nothing in between reorders a sure answer', () => {
    const prior = [0.1, 0.2, 0.3, 0.15, 0.15, 0.1];
    const logits = [9, 1, 0, 0, 0, 0];
    const gated = (evidence: number, gate = 3) => gatedProbabilities(logits, evidence, { temperature: 0.5, prior, gate });
    gated(0).forEach((p, k) => expect(p).toBeCloseTo(prior[k]!, 12));
    expect(gated(5, 0)).toEqual(softmax(logits, 0.5)); // a gate of 0 is the temperature alone
    expect(gated(1000)[0]!).toBeCloseTo(softmax(logits, 0.5)[0]!, 2);
    const confidence = [1, 2, 4, 8, 16].map((n) => gated(n)[0]!);
    for (let i = 1; i < confidence.length; i++) expect(confidence[i]!).toBeGreaterThan(confidence[i - 1]!); // more evidence, more sure
    expect(gated(2).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
  });

  test('the shipped model is what training on the training split gives today (retrain with npm run train:classifier)', () => {
    const shipped = readFileSync(fileURLToPath(new URL('../../shared/classifiers/linear/type-model.generated.ts', import.meta.url)), 'utf8');
    expect(modelModule(trainShippedModel()) === shipped).toBe(true);
  });
});
