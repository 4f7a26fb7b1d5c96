import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { floorKey, startHttpFloor } from './http-floor.js';
import { BenchHttp } from './http.js';
import { median } from './stats.js';

/**
 * What this machine does in a moment, measured at the start of a run, so that a run's figures can be read
 * against those of a run made at another hour, or on another host. This shared machine's speed moves from
 * one hour to the next, and its host changed on 2026-11-27 (docs/benchmarks.md, step 0), and neither moves
 * every kind of work alike: on the later host, where the benchmark's HTTP searches and durable writes run
 * at a third of their speed on the first, this probe's round trip took 0.33 to 0.37 ms, and a plainer
 * client's 0.21 to 0.24 ms where it had taken 0.037 ms on the first. Three probes, each a median:
 * - `cpuLoopMs`: a fixed loop of arithmetic on this thread (the engine's kind of work);
 * - `fsyncMs`: appending 4 KB to a file in the temporary directory, where the servers keep their data, and
 *   `fsync` (a durable write's wait);
 * - `roundTripMs`: a GET of 100 bytes from a bare node:http server in a process of its own, with the
 *   benchmark's client, one at a time (the wake-ups of two processes that every request over HTTP pays).
 */
export interface MachineProbe {
  cpuLoopMs: number;
  fsyncMs: number;
  roundTripMs: number;
}

export interface ProbeOptions {
  /** Iterations of the loop, in each of its three timed runs (default 100 000 000: about 0.2 s a run here). */
  loop?: number;
  fsyncs?: number;
  roundTrips?: number;
}

export async function probeMachine({ loop = 100_000_000, fsyncs = 200, roundTrips = 2_000 }: ProbeOptions = {}): Promise<MachineProbe> {
  const loops: number[] = [];
  for (let run = 0; run < 3; run++) {
    const started = performance.now();
    let x = 0;
    for (let i = 0; i < loop; i++) x += i % 7;
    loops.push(performance.now() - started);
    // Kept, so that the loop is not optimized away.
    if (x < 0) throw new Error('unreachable');
  }

  const dir = mkdtempSync(join(tmpdir(), 'memory-bench-probe-'));
  const syncs: number[] = [];
  const page = Buffer.alloc(4096, 120);
  try {
    const fd = openSync(join(dir, 'probe'), 'w');
    try {
      for (let i = 0; i < fsyncs; i++) {
        writeSync(fd, page);
        const started = performance.now();
        fsyncSync(fd);
        syncs.push(performance.now() - started);
      }
    } finally {
      closeSync(fd);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const path = '/probe';
  const server = await startHttpFloor(new Map([[floorKey('probe', path), 'x'.repeat(100)]]));
  const client = new BenchHttp(server.url, 1);
  const trips: number[] = [];
  try {
    // The first requests open the connection and warm both sides; they are not counted.
    for (let i = 0; i < roundTrips + 100; i++) {
      const started = performance.now();
      const res = await client.send('GET', path, 'probe');
      if (res.status !== 200) throw new Error(`the probe's server answered ${res.status}`);
      if (i >= 100) trips.push(performance.now() - started);
    }
  } finally {
    client.close();
    await server.stop();
  }
  return { cpuLoopMs: median(loops), fsyncMs: median(syncs), roundTripMs: median(trips) };
}

/** The probe as the report's sentence. */
export function probeSentence(p: MachineProbe): string {
  const ms = (x: number) => `${x.toFixed(3)} ms`;
  return `This machine at the start of the run (bench/support/machine-probe.ts): a fixed loop of arithmetic ${p.cpuLoopMs.toFixed(0)} ms, an fsync of 4 KB ${ms(p.fsyncMs)}, a round trip of 100 bytes to a bare HTTP server ${ms(p.roundTripMs)} (medians).`;
}
