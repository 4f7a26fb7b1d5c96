/**
 * `npm run bench:sdk [-- --calls 500]`: what each SDK adds to a call. The local server runs as `npm start`
 * runs it (a child process, SQLite, a fresh data directory); the TypeScript SDK (this process) and the
 * Python SDK (a python3 child, from python/src) each make the same calls one after another, c=1: a search
 * with a question over 200 records, and a read by id. Prints JSON: each SDK's p50 and p95 in milliseconds,
 * and the Python/TypeScript ratio of the medians. A call's time is the whole round trip: the client's
 * work, the HTTP exchange and the server's.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { launchArguments } from '../scripts/dist.mjs';
import { MemoryClient } from '../sdk/src/index.js';
import { note } from './support/progress.js';
import { latencyStats } from './support/stats.js';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '500' } } });
const calls = Number(values.calls);
if (!Number.isInteger(calls) || calls < 10) throw new Error('--calls must be an integer of at least 10');

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const QUESTION = 'What does the user prefer for the editor theme?';

/** Starts the server and answers its URL and printed key; rate limits high enough not to throttle the run. */
async function startServer(dataDir: string) {
  const child = spawn(process.execPath, launchArguments('server'), {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', MEMORY_DATA_DIR: dataDir, LOG_LEVEL: 'SILENT', MEMORY_DEFAULT_RATE: '100000', MEMORY_DEFAULT_BURST: '100000' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  for (const deadline = Date.now() + 60_000; !/More keys/.test(out); ) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the server did not start: ${out}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { child, url: /listening on (http:\/\/\S+)/.exec(out)![1]!, key: /mem_[A-Za-z0-9_-]+/.exec(out)![0] };
}

/** The Python side: the same calls with agent_memory.MemoryClient; prints its latencies (ms) as JSON. */
const PYTHON = `
import json, sys, time
from agent_memory import MemoryClient
url, key, record_id, calls, question = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
memory = MemoryClient(url, key)
def timed(call):
    out = []
    for _ in range(calls):
        started = time.perf_counter()
        call()
        out.append((time.perf_counter() - started) * 1000)
    return out
for _ in range(20):
    memory.recall(question)
print(json.dumps({"recall": timed(lambda: memory.recall(question)), "get": timed(lambda: memory.get(record_id))}))
`;

async function timed(call: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    await call();
    out.push(performance.now() - started);
  }
  return out;
}

const dataDir = mkdtempSync(join(tmpdir(), 'memory-bench-sdk-'));
const server = await startServer(dataDir);
try {
  const memory = new MemoryClient({ baseUrl: server.url, apiKey: server.key });
  let id = '';
  for (let i = 0; i < 200; i++) {
    const title = i === 0 ? 'The user prefers the dark theme in the editor' : `Note ${i} about the project schedule and the team`;
    const receipt = await memory.remember({ agent_id: 'bench', type: 'fact', title, body: 'Written by the SDK benchmark.' });
    if (i === 0) id = receipt.id;
  }
  note(`timing ${calls} searches and ${calls} reads with each SDK, one at a time`);
  for (let i = 0; i < 20; i++) await memory.recall({ q: QUESTION });
  const ts = { recall: await timed(() => memory.recall({ q: QUESTION })), get: await timed(() => memory.get(id)) };
  const python = spawnSync(process.env.PYTHON ?? 'python3', ['-c', PYTHON, server.url, server.key, id, String(calls), QUESTION], {
    env: { ...process.env, PYTHONPATH: join(ROOT, 'python', 'src') },
    encoding: 'utf8',
  });
  if (python.status !== 0) throw new Error(`the Python side failed: ${python.stderr}`);
  const py = JSON.parse(python.stdout) as { recall: number[]; get: number[] };
  const summary = (latencies: number[]) => {
    const { p50Ms, p95Ms } = latencyStats(latencies, 1);
    return { p50Ms, p95Ms };
  };
  const result = {
    calls,
    typescript: { recall: summary(ts.recall), get: summary(ts.get) },
    python: { recall: summary(py.recall), get: summary(py.get) },
    pythonOverTypescriptP50: {
      recall: Math.round((summary(py.recall).p50Ms / summary(ts.recall).p50Ms) * 100) / 100,
      get: Math.round((summary(py.get).p50Ms / summary(ts.get).p50Ms) * 100) / 100,
    },
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} finally {
  server.child.kill('SIGTERM');
  await new Promise((resolve) => server.child.once('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
}
