import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchArguments } from '../../scripts/dist.mjs';
import type { Db } from '../../shared/adapters/local/database.js';

/** The project root: the children run from here, so that the relative paths resolve. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A fresh temporary data directory; remove it with `removeDir`. */
export function tempDir(prefix = 'memory-e2e-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * The environment of a child: this process's environment without any setting of the service, so that a
 * developer's MEMORY_* or PORT cannot leak into a test, plus the given settings.
 */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('MEMORY_') || ['PORT', 'HOST', 'LOG_LEVEL', 'NODE_OPTIONS'].includes(k)) continue;
    base[k] = v;
  }
  return { ...base, LOG_LEVEL: 'SILENT', ...env };
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Every child started by this module and not yet exited, so that `killAll` can end them after a test. */
const live = new Set<ChildProcess>();

/** The programs a user runs, by the name scripts/launch.mjs knows them by. */
export type Program = 'server' | 'admin' | 'memory' | 'mcp';

/**
 * The command line of `program` as the npm scripts run it: compiled, through scripts/launch.mjs (the
 * global setup has built dist/ from the current sources, so no child builds).
 */
export function programCommand(program: Program): { command: string; args: string[] } {
  return { command: process.execPath, args: launchArguments(program) };
}

/** Starts `program` from the project root, with `childEnv(env)`; `killAll` ends it if it is still running. */
export function spawnProgram(program: Program, args: string[], env: Record<string, string>): ChildProcess {
  const { command, args: launch } = programCommand(program);
  const child = spawn(command, [...launch, ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** Sends SIGKILL to every child of this module that is still running. Call it in afterAll/afterEach. */
export function killAll(): void {
  for (const child of live) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

export interface AdminResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (undefined when it is empty). */
  json: any;
  /** stderr parsed as JSON (undefined when it is empty or not JSON). */
  error: any;
}

/** Runs the admin CLI with `args` as a child process and waits for it to exit. */
export function runAdmin(args: string[], env: Record<string, string>): Promise<AdminResult> {
  return runProgram('admin', args, env);
}

/** Runs `program` as a child process, with `childEnv(env)` and `input` on its stdin, and waits for it to exit. */
export function runProgram(program: Program, args: string[], env: Record<string, string>, input = ''): Promise<AdminResult> {
  const { command, args: launch } = programCommand(program);
  return runCommand(command, [...launch, ...args], childEnv(env), input);
}

/** `text` as JSON; undefined when it is empty or not JSON. */
export function parseJson(text: string): any {
  try {
    return text.trim() === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Runs a command from the project root with exactly `env`, writes `input` to its stdin, and waits for it to
 * exit; `killAll` ends it if it is still running.
 */
export function runCommand(command: string, args: string[], env: NodeJS.ProcessEnv, input = ''): Promise<AdminResult> {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  live.add(child);
  child.once('exit', () => live.delete(child));
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const done = new Promise<AdminResult>((resolve, reject) => {
    child.once('error', reject);
    // A command that exits without reading its input (one that refuses its arguments) closes the pipe
    // first: the write's EPIPE is not a failure of the run, whose exit code and output tell what happened.
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') reject(error);
    });
    child.once('close', (code) => resolve({ code, stdout, stderr, json: parseJson(stdout), error: parseJson(stderr) }));
  });
  child.stdin.end(input);
  return done;
}

/** Like runAdmin, but fails unless the command exits with 0; returns its JSON. */
export async function admin(args: string[], env: Record<string, string>): Promise<any> {
  const result = await runAdmin(args, env);
  if (result.code !== 0) throw new Error(`admin ${args.join(' ')} exited with ${result.code}: ${result.stderr}`);
  return result.json;
}

export interface ServerProcess {
  child: ChildProcess;
  /** The base URL the server printed, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Everything printed so far (complete once `closed` has resolved). */
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited and its output streams are closed. */
  closed: Promise<Exit>;
  /** Sends a signal and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

/** Polls until `check()` holds, or fails after `timeoutMs`. */
export async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Waits until a running server's merge has taken every record into the search index (its merge mark at the
 * last seq given), reading `db`, a connection of the test's own to the server's database.
 */
export async function waitForMerge(db: Db, timeoutMs: number, what: string): Promise<void> {
  const state = db.prepare('SELECT merged_upto, last_seq FROM search_state');
  await waitFor(() => {
    const { merged_upto, last_seq } = state.get() as { merged_upto: number; last_seq: number };
    return merged_upto === last_seq;
  }, timeoutMs, what);
}

/**
 * Starts the server on an ephemeral port (PORT=0) and resolves once it has printed the address it listens
 * on. Rejects with its stderr if it exits first.
 */
export function startServer(dataDir: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const child = spawnProgram('server', [], { PORT: '0', MEMORY_DATA_DIR: dataDir, ...env });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const closed = new Promise<Exit>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  const stop = (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return closed;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the server did not start in time; stderr: ${stderr}`));
    }, 15_000);
    const onData = () => {
      const m = /memory service listening on (http:\/\/\S+)/.exec(stdout);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      resolve({ child, url: m[1]!, stdout: () => stdout, stderr: () => stderr, closed, stop });
    };
    child.stdout!.on('data', onData);
    void closed.then((exit) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${exit.code ?? exit.signal}) before listening; stderr: ${stderr}`));
    });
  });
}
