import { expect, test } from '@jest/globals';
import { probeMachine, probeSentence } from '../../bench/support/machine-probe.js';

test('the machine probe times the loop, an fsync and a round trip over HTTP, each a positive median', async () => {
  const probe = await probeMachine({ loop: 100_000, fsyncs: 5, roundTrips: 20 });
  for (const value of [probe.cpuLoopMs, probe.fsyncMs, probe.roundTripMs]) {
    expect(Number.isFinite(value)).toBe(true);
    expect(value).toBeGreaterThan(0);
  }
});

test("the probe's sentence names each figure", () => {
  expect(probeSentence({ cpuLoopMs: 351.4, fsyncMs: 0.1064, roundTripMs: 0.2071 })).toBe(
    'This machine at the start of the run (bench/support/machine-probe.ts): a fixed loop of arithmetic 351 ms, an fsync of 4 KB 0.106 ms, a round trip of 100 bytes to a bare HTTP server 0.207 ms (medians).',
  );
});
