/**
 * `npm run bench:startup`: how long the programs a user runs take from a cold process, each way they can be
 * run, in one run (so the ratios compare like with like on this noisy machine):
 * - `server ready`: from spawn to the first `GET /healthz` that answers 200, on a database that exists;
 * - `admin tenant list`, `memory list` (against a running server) and MCP `initialize` (from spawn to the
 *   answer to the first request over stdio): each a fresh process, as an agent or an operator starts it.
 *
 * The ways: `compiled` is `node` on the launcher (scripts/launch.mjs) and the bundles in dist/, what the npm
 * scripts run; `tsx` is the TypeScript source through tsx's command (with its transform cache warm, its best
 * case), what the npm scripts ran before; `npm run` is the command as the README shows it (npm's own start
 * is part of what a user waits for). Prints a Markdown table of medians (ms) and writes nothing else.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { currentBuild, launchArguments } from '../scripts/dist.mjs';
import { median } from './support/stats.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}
const RUNS = Number(option('--runs') ?? 9);

/** The programs, by the source file tsx runs, the name the launcher runs, and the npm script. */
const PROGRAMS = {
  server: { source: 'local/server.ts', compiled: 'server', script: 'start' },
  admin: { source: 'local/admin.ts', compiled: 'admin', script: 'admin' },
  memory: { source: 'cli/memory.ts', compiled: 'memory', script: 'memory' },
  mcp: { source: 'mcp/server.ts', compiled: 'mcp', script: 'mcp' },
} as const;
type Program = keyof typeof PROGRAMS;

const WAYS = {
  compiled: (p: Program) => [process.execPath, ...launchArguments(PROGRAMS[p].compiled)],
  // What the npm scripts ran before the build: tsx's command, which starts a second node with its loader.
  tsx: (p: Program) => [process.execPath, join(ROOT, 'node_modules/tsx/dist/cli.mjs'), PROGRAMS[p].source],
  'npm run': (p: Program) => (p === 'server' ? ['npm', 'start', '--silent'] : ['npm', 'run', '--silent', PROGRAMS[p].script, '--']),
} as const;
type Way = keyof typeof WAYS;
/** `--ways tsx,npm run` measures those only (the default: all three). */
const SELECTED = (option('--ways')?.split(',') ?? Object.keys(WAYS)) as Way[];
for (const way of SELECTED) if (!(way in WAYS)) throw new Error(`--ways: no way named ${way} (${Object.keys(WAYS).join(', ')})`);

function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MEMORY_') && !['PORT', 'HOST'].includes(k)) base[k] = v;
  return { ...base, LOG_LEVEL: 'SILENT', ...extra };
}

/** Runs a command to its exit; resolves with its wall time (ms) and output, rejects on a non-zero exit. */
function timedRun(argv: readonly string[], extra: Record<string, string>): Promise<{ ms: number; stdout: string }> {
  const started = performance.now();
  const child = spawn(argv[0]!, argv.slice(1), { cwd: ROOT, env: env(extra), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  return new Promise((resolve, reject) => {
    child.once('close', (code) => {
      const ms = performance.now() - started;
      if (code === 0) resolve({ ms, stdout });
      else reject(new Error(`${argv.join(' ')} exited with ${code}: ${stderr}`));
    });
  });
}

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Starts the server; resolves with the time to its first healthy answer, and a way to stop it. */
async function serverReady(argv: readonly string[], dataDir: string): Promise<{ ms: number; url: string; stdout: () => string; stop: () => Promise<void> }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const child = spawn(argv[0]!, argv.slice(1), { cwd: ROOT, env: env({ PORT: String(port), MEMORY_DATA_DIR: dataDir }), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr.resume();
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}: ${out}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  const ms = performance.now() - started;
  // npm start runs the server under a shell: signal the whole group so nothing is left listening.
  return { ms, url, stdout: () => out, stop: () => (process.kill(-child.pid!, 'SIGTERM'), exited) };
}

/** Spawns the MCP server over stdio and resolves with the time to its answer to `initialize`. */
function mcpInitialize(argv: readonly string[], extra: Record<string, string>): Promise<number> {
  const started = performance.now();
  const child = spawn(argv[0]!, argv.slice(1), { cwd: ROOT, env: env(extra), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  child.stderr.resume();
  child.stdin.write(
    `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } })}\n`,
  );
  return new Promise((resolve, reject) => {
    let out = '';
    let ms: number | undefined;
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      if (ms !== undefined || !out.includes('"id":1')) return;
      ms = performance.now() - started;
      child.stdin.end();
      process.kill(-child.pid!, 'SIGTERM');
    });
    child.once('close', (code) => (ms === undefined ? reject(new Error(`the MCP server exited with ${code} before answering: ${out}`)) : resolve(ms)));
  });
}

async function main(): Promise<void> {
  // A build made now is not part of any measurement.
  await currentBuild((line) => process.stderr.write(`${line}\n`));
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-startup-'));
  try {
    // The database, its first key and a few records, made once by a server of the first way.
    const first = await serverReady(WAYS[SELECTED[0]!]('server'), dataDir);
    try {
      await measure(first, dataDir);
    } finally {
      await first.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Every case, each way, with `first` serving the client programs on `dataDir`. */
async function measure(first: Awaited<ReturnType<typeof serverReady>>, dataDir: string): Promise<void> {
  const printed = /Its API key, shown only this once:\s+(mem_\S+)/;
  for (let waited = 0; !printed.test(first.stdout()); waited += 10) {
    if (waited > 5_000) throw new Error(`no first key in the server's output: ${first.stdout()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  const key = printed.exec(first.stdout())![1]!;
  for (let i = 0; i < 20; i++) {
    const response = await fetch(`${first.url}/api/v1/record`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ agent_id: 'bench', type: 'fact', title: `Record ${i}`, body: 'Start-up benchmark.' }),
    });
    if (response.status !== 201) throw new Error(`write answered ${response.status}`);
  }
  const client = { MEMORY_API_URL: first.url, MEMORY_API_KEY: key, MEMORY_DATA_DIR: dataDir };

  const table: Record<string, Partial<Record<Way, number>>> = {};
  const cases: Record<string, (way: Way) => Promise<number>> = {
    'server ready': async (way) => {
      const s = await serverReady(WAYS[way]('server'), mkdtempSync(join(tmpdir(), 'bench-startup-s-')));
      await s.stop();
      return s.ms;
    },
    'admin tenant list': async (way) => (await timedRun([...WAYS[way]('admin'), 'tenant', 'list'], client)).ms,
    'memory list': async (way) => (await timedRun([...WAYS[way]('memory'), 'list', '--limit', '5'], client)).ms,
    'MCP initialize': (way) => mcpInitialize(WAYS[way]('mcp'), client),
  };
  for (const [name, measure] of Object.entries(cases)) {
    const times = new Map<Way, number[]>(SELECTED.map((way) => [way, []]));
    // The ways take turns, so that the machine's drift over the run falls on each alike.
    for (let run = 0; run < RUNS; run++) for (const way of SELECTED) times.get(way)!.push(await measure(way));
    table[name] = Object.fromEntries([...times].map(([way, t]) => [way, median(t)]));
    process.stderr.write(`${name}: done\n`);
  }
  const ms = (x: number | undefined) => (x === undefined ? '' : x.toFixed(0));
  const ratio = SELECTED.includes('compiled') && SELECTED.includes('tsx');
  const lines = [
    `Medians of ${RUNS} cold processes each, ms (${new Date().toISOString().slice(0, 16)}Z, node ${process.version}):`,
    '',
    `| program | ${SELECTED.join(' | ')} |${ratio ? ' tsx ÷ compiled |' : ''}`,
    `|---|${SELECTED.map(() => '---:|').join('')}${ratio ? '---:|' : ''}`,
    ...Object.entries(table).map(
      ([name, t]) => `| ${name} | ${SELECTED.map((way) => ms(t[way])).join(' | ')} |${ratio ? ` ${(t.tsx! / t.compiled!).toFixed(1)}× |` : ''}`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
