import {
  AccessDeniedException,
  BedrockRuntimeClient,
  ConverseCommand,
  ThrottlingException,
  type ConverseCommandOutput,
  type StopReason,
} from '@aws-sdk/client-bedrock-runtime';
import { beforeEach, describe, expect, jest, test } from '@jest/globals';
import { mockClient } from 'aws-sdk-client-mock';
import { BEDROCK_LIMITS, BEDROCK_SYSTEM_PROMPT, BedrockClassifier } from '../../shared/adapters/aws/bedrock/classifier.js';
import { loadAwsConfig } from '../../shared/adapters/aws/config.js';
import { RECORD_TYPES, type RecordType } from '../../shared/domain/record.js';
import type { Classifier, Suggestion } from '../../shared/ports.js';

/**
 * The Bedrock classifier at the SDK boundary: the Converse request it sends, how it reads the answer, and
 * that every kind of failure ends in the fallback's suggestion with one warning. Bedrock cannot run here.
 */

const MODEL_ID = 'us.anthropic.claude-3-haiku-20240307-v1:0';
const INPUT = { title: 'Chose PostgreSQL for billing', body: 'We need transactions across invoices and payments.' };
const FALLBACK: Suggestion = {
  type: 'fact',
  confidence: 0.4,
  scores: { fact: 0.4, decision: 0.2, exchange: 0.1, deliverable: 0.1, open_item: 0.1, signal: 0.1 },
  model: 'fallback-test',
};

const bedrock = mockClient(BedrockRuntimeClient);
/** The fallback classifier's `classify`. */
let fallback: jest.Mock<Classifier['classify']>;
let warn: jest.Mock<(message: string, extra: Record<string, unknown>) => void>;

const classifier = (timeoutMs = 2_000) =>
  new BedrockClassifier({ client: new BedrockRuntimeClient({ region: 'us-east-1' }), modelId: MODEL_ID, timeoutMs, fallback: { classify: fallback }, logger: { warn } });

/** A Converse response whose answer is `text`. */
const reply = (text: string, stopReason: StopReason = 'end_turn'): ConverseCommandOutput => ({
  output: { message: { role: 'assistant', content: [{ text }] } },
  stopReason,
  usage: { inputTokens: 700, outputTokens: 60, totalTokens: 760 },
  metrics: { latencyMs: 300 },
  $metadata: {},
});

const scores = (overrides: Partial<Record<RecordType, number>> = {}) => ({ fact: 0.05, decision: 0.8, exchange: 0.05, deliverable: 0.05, open_item: 0.03, signal: 0.02, ...overrides });
const GOOD = JSON.stringify({ type: 'decision', scores: scores() });

/** The options (second argument) of the nth `send`: where the abort signal travels. */
const sendOptions = (n = 0) => (bedrock.send.getCall(n).args as unknown[])[1] as { abortSignal?: AbortSignal } | undefined;

/** Expects the fallback's suggestion, one fallback call with the input, and one warning whose reason matches. */
async function expectFallback(result: Promise<Suggestion>, reason: RegExp): Promise<void> {
  expect(await result).toEqual(FALLBACK);
  expect(fallback.mock.calls).toEqual([[INPUT]]);
  expect(warn).toHaveBeenCalledTimes(1);
  expect(warn.mock.calls[0]![0]).toMatch(/fallback/);
  expect(warn.mock.calls[0]![1]).toEqual({ model_id: MODEL_ID, reason: expect.stringMatching(reason) });
}

beforeEach(() => {
  bedrock.reset();
  fallback = jest.fn(async () => FALLBACK);
  warn = jest.fn();
});

describe('the request', () => {
  test('one Converse call: the model id, the system prompt, temperature 0, a small maxTokens, the record as JSON', async () => {
    bedrock.on(ConverseCommand).resolves(reply(GOOD));
    await classifier().classify(INPUT);
    expect(bedrock.commandCalls(ConverseCommand).map((c) => c.args[0].input)).toEqual([
      {
        modelId: MODEL_ID,
        system: [{ text: BEDROCK_SYSTEM_PROMPT }],
        messages: [{ role: 'user', content: [{ text: JSON.stringify({ title: INPUT.title, body: INPUT.body, body_truncated: false }) }] }],
        inferenceConfig: { temperature: 0, maxTokens: 150 },
      },
    ]);
    expect(sendOptions()?.abortSignal).toBeInstanceOf(AbortSignal);
  });

  test('the system prompt defines each of the six types with an example and asks for JSON only', () => {
    for (const type of RECORD_TYPES) expect(BEDROCK_SYSTEM_PROMPT).toMatch(new RegExp(`^- ${type}: .+ Example: ".+"$`, 'm'));
    expect(BEDROCK_SYSTEM_PROMPT).toContain('Answer with one JSON object and nothing else');
    expect(BEDROCK_SYSTEM_PROMPT).toContain(`first ${BEDROCK_LIMITS.bodyChars} characters`);
    // docs/deploy.md prices a call from this length and from the limits: change them together.
    expect(BEDROCK_SYSTEM_PROMPT.length).toBe(1_521);
    expect(BEDROCK_LIMITS).toEqual({ titleChars: 1_000, bodyChars: 4_000, maxTokens: 150 });
  });

  test('a long body is cut to 4000 code points and marked truncated; a long title to 1000', async () => {
    bedrock.on(ConverseCommand).resolves(reply(GOOD));
    // Astral characters are two UTF-16 units each: a cut by code units would split one.
    await classifier().classify({ title: 't'.repeat(1_500), body: '😀'.repeat(4_001) });
    const [message] = bedrock.commandCalls(ConverseCommand)[0]!.args[0].input.messages!;
    const sent = JSON.parse(message!.content![0]!.text!) as { title: string; body: string; body_truncated: boolean };
    expect(sent).toEqual({ title: 't'.repeat(1_000), body: '😀'.repeat(4_000), body_truncated: true });
  });
});

describe('a good answer', () => {
  // The scores sum to 2, in powers of two so that the halves are exact.
  test('is the suggestion: scores normalised to sum 1, confidence the score of the type, the model named', async () => {
    bedrock.on(ConverseCommand).resolves(reply(JSON.stringify({ type: 'decision', scores: scores({ decision: 1, fact: 0.5, exchange: 0.125, deliverable: 0.125, open_item: 0.125, signal: 0.125 }) })));
    const suggestion = await classifier().classify(INPUT);
    expect(suggestion).toEqual({
      type: 'decision',
      confidence: 0.5,
      scores: { fact: 0.25, decision: 0.5, exchange: 0.0625, deliverable: 0.0625, open_item: 0.0625, signal: 0.0625 },
      model: `bedrock:${MODEL_ID}`,
    });
    expect(fallback).not.toHaveBeenCalled();
    expect(warn).not.toHaveBeenCalled();
  });

  test.each([
    ['surrounded by whitespace', `\n  ${GOOD}  \n`],
    ['in a ```json fence', `\`\`\`json\n${GOOD}\n\`\`\``],
    ['in a bare ``` fence', `\`\`\`\n${GOOD}\n\`\`\`\n`],
  ])('is accepted %s', async (_, text) => {
    bedrock.on(ConverseCommand).resolves(reply(text));
    expect(await classifier().classify(INPUT)).toMatchObject({ type: 'decision', model: `bedrock:${MODEL_ID}` });
    expect(warn).not.toHaveBeenCalled();
  });

  test('leaves nothing running: the deadline is cleared, so the signal is never aborted afterwards', async () => {
    bedrock.on(ConverseCommand).resolves(reply(GOOD));
    await classifier(50).classify(INPUT);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sendOptions()?.abortSignal?.aborted).toBe(false);
  });
});

describe('any failure: the fallback answers, with one warning that says why', () => {
  const noSignal = JSON.stringify({ type: 'decision', scores: { fact: 0.1, decision: 0.7, exchange: 0.1, deliverable: 0.05, open_item: 0.05 } });
  test.each([
    ['invalid JSON', '{"type": "decision", "scores": {"fact": 0.1', /not JSON/],
    ['prose before the JSON', `Here is the classification: ${GOOD}`, /not JSON/],
    ['prose after the JSON', `${GOOD}\nThe record states a choice that was made.`, /not JSON/],
    ['text around a fence', `Sure!\n\`\`\`json\n${GOOD}\n\`\`\``, /not JSON/],
    ['an unknown type', JSON.stringify({ type: 'preference', scores: scores() }), /does not fit the schema: type/],
    ['a type missing from the scores', noSignal, /does not fit the schema: scores/],
    ['no scores', JSON.stringify({ type: 'decision' }), /does not fit the schema: scores/],
    ['an extra score', JSON.stringify({ type: 'decision', scores: { ...scores(), preference: 0.1 } }), /does not fit the schema/],
    ['an extra field', JSON.stringify({ type: 'decision', scores: scores(), reason: 'a choice' }), /does not fit the schema/],
    ['a score above 1', JSON.stringify({ type: 'decision', scores: scores({ decision: 80 }) }), /does not fit the schema: scores.decision/],
    ['a score as a string', JSON.stringify({ type: 'decision', scores: { ...scores(), fact: '0.05' } }), /does not fit the schema: scores.fact/],
    ['all scores 0', JSON.stringify({ type: 'decision', scores: scores(Object.fromEntries(RECORD_TYPES.map((t) => [t, 0]))) }), /all scores are 0/],
    ['a type that is not the highest score', JSON.stringify({ type: 'fact', scores: scores() }), /"fact" is not the type with the highest score/],
    ['an empty answer', '  ', /no text/],
  ])('%s', async (_, text, reason) => {
    bedrock.on(ConverseCommand).resolves(reply(text));
    await expectFallback(classifier().classify(INPUT), reason);
  });

  test.each<[StopReason, string]>([
    ['max_tokens', GOOD.slice(0, 40)],
    ['max_tokens', GOOD],
    ['guardrail_intervened', GOOD],
    ['content_filtered', GOOD],
  ])('stop reason %s (even with valid JSON)', async (stopReason, text) => {
    bedrock.on(ConverseCommand).resolves(reply(text, stopReason));
    await expectFallback(classifier().classify(INPUT), new RegExp(`stop reason ${stopReason}`));
  });

  test.each([
    ['throttling', new ThrottlingException({ message: 'Too many requests, please wait before trying again.', $metadata: {} }), /ThrottlingException: Too many requests/],
    ['access denied (model access not enabled)', new AccessDeniedException({ message: "You don't have access to the model", $metadata: {} }), /AccessDeniedException/],
    ['a network error', Object.assign(new Error('socket hang up'), { name: 'TimeoutError' }), /TimeoutError: socket hang up/],
  ])('%s', async (_, error, reason) => {
    bedrock.on(ConverseCommand).rejects(error);
    await expectFallback(classifier().classify(INPUT), reason);
  });

  test('timeout: a call that would never end is aborted at the deadline, and the fallback answers in time', async () => {
    let aborted = false;
    // As the SDK does: the request ends only when its signal aborts it.
    bedrock.on(ConverseCommand).callsFake(
      () =>
        new Promise((_, reject) => {
          const signal = sendOptions(bedrock.send.callCount - 1)!.abortSignal!;
          signal.addEventListener('abort', () => {
            aborted = true;
            reject(Object.assign(new Error('Request aborted'), { name: 'AbortError' }));
          });
        }),
    );
    const started = performance.now();
    await expectFallback(classifier(100).classify(INPUT), /no answer within 100 ms/);
    const elapsed = performance.now() - started;
    expect(aborted).toBe(true);
    expect(sendOptions()?.abortSignal?.aborted).toBe(true);
    expect(elapsed).toBeGreaterThanOrEqual(95);
    expect(elapsed).toBeLessThan(1_000);
  }, 5_000);

  test('timeout: the deadline holds even if a stage of the SDK ignores the signal', async () => {
    bedrock.on(ConverseCommand).callsFake(() => new Promise(() => undefined));
    const started = performance.now();
    await expectFallback(classifier(100).classify(INPUT), /no answer within 100 ms/);
    expect(performance.now() - started).toBeLessThan(1_000);
  }, 5_000);

  test('only a failing fallback makes it reject', async () => {
    bedrock.on(ConverseCommand).rejects(new ThrottlingException({ message: 'slow down', $metadata: {} }));
    fallback.mockRejectedValueOnce(new Error('fallback broke'));
    await expect(classifier().classify(INPUT)).rejects.toThrow('fallback broke');
  });
});

describe('the Bedrock settings', () => {
  test('none: no Bedrock (the linear model); the switch and a model id: Bedrock, 3 s by default', () => {
    expect(loadAwsConfig({}).bedrock).toBeNull();
    expect(loadAwsConfig({ MEMORY_CLASSIFIER: 'linear' }).bedrock).toBeNull();
    expect(loadAwsConfig({ MEMORY_CLASSIFIER: 'bedrock', BEDROCK_MODEL_ID: MODEL_ID }).bedrock).toEqual({ modelId: MODEL_ID, timeoutMs: 3_000 });
    expect(loadAwsConfig({ MEMORY_CLASSIFIER: 'bedrock', BEDROCK_MODEL_ID: MODEL_ID, BEDROCK_TIMEOUT_MS: '1500' }).bedrock).toEqual({ modelId: MODEL_ID, timeoutMs: 1_500 });
  });

  test('half a configuration is refused, naming what is missing', () => {
    expect(() => loadAwsConfig({ MEMORY_CLASSIFIER: 'bedrock' })).toThrow('invalid configuration: MEMORY_CLASSIFIER=bedrock needs BEDROCK_MODEL_ID');
    expect(() => loadAwsConfig({ BEDROCK_MODEL_ID: MODEL_ID })).toThrow('invalid configuration: BEDROCK_MODEL_ID is set but MEMORY_CLASSIFIER is linear');
    expect(() => loadAwsConfig({ MEMORY_CLASSIFIER: 'linear', BEDROCK_MODEL_ID: MODEL_ID })).toThrow(/BEDROCK_MODEL_ID is set but MEMORY_CLASSIFIER is linear/);
  });

  test.each([
    [{ MEMORY_CLASSIFIER: 'openai' }, /invalid configuration: MEMORY_CLASSIFIER/],
    [{ MEMORY_CLASSIFIER: 'bedrock', BEDROCK_MODEL_ID: MODEL_ID, BEDROCK_TIMEOUT_MS: '50' }, /invalid configuration: BEDROCK_TIMEOUT_MS/],
    [{ MEMORY_CLASSIFIER: 'bedrock', BEDROCK_MODEL_ID: MODEL_ID, BEDROCK_TIMEOUT_MS: '30000' }, /invalid configuration: BEDROCK_TIMEOUT_MS/],
    [{ MEMORY_CLASSIFIER: 'bedrock', BEDROCK_MODEL_ID: MODEL_ID, BEDROCK_TIMEOUT_MS: 'soon' }, /invalid configuration: BEDROCK_TIMEOUT_MS/],
    [{ MEMORY_CLASSIFIER: 'bedrock', BEDROCK_MODEL_ID: '' }, /invalid configuration: BEDROCK_MODEL_ID/],
  ])('%j is refused', (env, message) => {
    expect(() => loadAwsConfig(env)).toThrow(message);
  });
});
