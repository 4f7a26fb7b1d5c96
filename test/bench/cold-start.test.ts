import { describe, expect, test } from '@jest/globals';
import { measureColdStarts } from '../../bench/cold-start.js';
import { LAMBDA_FUNCTIONS, type LambdaFunctionName } from '../../infra/lambda-bundling.js';

/**
 * Port calls per warm invocation: a write, a search and its quota count, a key lookup, one index write and
 * one enqueue per stream batch, one stored suggestion per queue message (batches of 10). The classify
 * function has no port: its classifier runs in process.
 */
const PORT_CALLS: Record<LambdaFunctionName, number> = { record: 1, query: 2, classify: 0, authorizer: 1, indexer: 2, classifier: 10 };

describe('cold starts', () => {
  test('every Lambda is bundled, loaded in fresh processes and timed warm against the fakes', async () => {
    const lines: string[] = [];
    // measureColdStarts throws if any warm invocation is not a success (a 2xx, an Allow policy, no batch
    // item failures), so reaching the assertions means every call answered as it should.
    const results = await measureColdStarts((line) => lines.push(line), { runs: 2, warmCalls: 50 });
    expect(results.map((r) => r.name)).toEqual([...LAMBDA_FUNCTIONS]);
    for (const r of results) {
      expect({ name: r.name, bundled: r.bytes > 100_000 && r.mapBytes > r.bytes, loaded: r.loadMs > 0, runs: r.runs }).toEqual({ name: r.name, bundled: true, loaded: true, runs: 2 });
      expect(r.warmHandlerUs.calls).toBe(50);
      expect(r.warmHandlerUs.p50).toBeGreaterThan(0);
      expect(r.warmHandlerUs.p99).toBeGreaterThanOrEqual(r.warmHandlerUs.p50);
      expect({ name: r.name, portCalls: r.portCalls }).toEqual({ name: r.name, portCalls: PORT_CALLS[r.name] * 50 });
    }
    expect(lines.length).toBe(2 * LAMBDA_FUNCTIONS.length);
    console.log(results.map((r) => `${r.name}: ${r.bytes} B, load ${r.loadMs.toFixed(0)} ms, warm p50 ${r.warmHandlerUs.p50.toFixed(0)} µs`).join('\n'));
  }, 60_000);
});
