import { LinearClassifier } from '../../shared/classifiers/linear/model.js';
import { TYPE_MODEL } from '../../shared/classifiers/linear/type-model.generated.js';
import { measureBundleLoad } from '../cold-start.js';
import { startBenchServer } from '../support/server.js';
import { percentile } from '../support/stats.js';

export interface Speed {
  /** One classification in this process, in microseconds. */
  inProcess: { calls: number; p50Us: number; p99Us: number };
  /** `POST /v1/classify` through the local server, one request at a time, in milliseconds. */
  http: { requests: number; p50Ms: number; p99Ms: number };
  /** Loading in a fresh `node`, median of `runs`, in milliseconds, with the bundle sizes in bytes. */
  coldStart: { runs: number; modelMs: number; modelBytes: number; lambdaMs: number; lambdaBytes: number };
}

const sorted = (values: number[]) => [...values].sort((a, b) => a - b);

/** Times the shipped classifier three ways: in process, over HTTP, and at cold start. */
export async function measureSpeed(inputs: { title: string; body: string }[], progress: (line: string) => void): Promise<Speed> {
  progress('speed: in process');
  const model = new LinearClassifier(TYPE_MODEL);
  const micros: number[] = [];
  for (let round = 0; round < 40; round++) {
    for (const input of inputs) {
      const t = performance.now();
      await model.classify(input);
      if (round > 0) micros.push((performance.now() - t) * 1000); // the first round warms the JIT up
    }
  }
  const inProcess = { calls: micros.length, p50Us: percentile(sorted(micros), 50), p99Us: percentile(sorted(micros), 99) };

  progress('speed: POST /v1/classify through the local server');
  const server = await startBenchServer();
  const millis: number[] = [];
  try {
    for (let round = 0; round < 9; round++) {
      for (const input of inputs) {
        const t = performance.now();
        const res = await fetch(`${server.url}/v1/classify`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${server.key}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ title: input.title, body: input.body }),
        });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`POST /v1/classify answered ${res.status}`);
        if (round > 0) millis.push(performance.now() - t);
      }
    }
  } finally {
    await server.stop();
  }
  const http = { requests: millis.length, p50Ms: percentile(sorted(millis), 50), p99Ms: percentile(sorted(millis), 99) };

  progress('speed: cold start of the model alone and of the classify Lambda, bundled as the stack bundles them');
  const RUNS = 10;
  const env = { AWS_REGION: 'us-east-1', AWS_LAMBDA_FUNCTION_NAME: 'classify' };
  const modelLoad = await measureBundleLoad('shared/classifiers/default.ts', { runs: RUNS, env });
  const lambdaLoad = await measureBundleLoad('functions/classify/index.ts', { runs: RUNS, env });
  return {
    inProcess,
    http,
    coldStart: { runs: RUNS, modelMs: modelLoad.loadMs, modelBytes: modelLoad.bytes, lambdaMs: lambdaLoad.loadMs, lambdaBytes: lambdaLoad.bytes },
  };
}
