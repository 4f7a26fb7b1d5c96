/**
 * The examples of the README, the TypeScript SDK's README and the Python SDK's README, run as written
 * against a server on a port that is not the default, so that the docs cannot drift from the code.
 *
 * Every fenced block of those files is either run or named in NOT_RUN with the reason; a block that is
 * neither fails the first test, so a new example is run from the day it is written.
 * - `sh`: each command, joined across `\` continuations, runs in bash with `set -euo pipefail`, in an empty
 *   folder, with MEMORY_API_URL, MEMORY_API_KEY and MEMORY_DATA_DIR of the server; `curl` fails on an HTTP
 *   error (`--fail-with-body`), and `npm` runs this project's scripts from there (`--prefix`). A line with
 *   a placeholder (`<tenant_id>`, `[--name N]`, `0193…`, `mem_...`) is a synopsis, not a command, and is
 *   left out.
 * - `ts`: run with tsx, `@agent-memory/sdk` being sdk/src. A block without an import of its own is a
 *   fragment of the file's example: it runs after a prelude that makes `memory`, `id`, `record`, `baseUrl`
 *   and `apiKey`, in a scope of its own.
 * - `python`: run with python3 and the SDK's source on PYTHONPATH, after a prelude that makes `memory`.
 * `http://127.0.0.1:8787` in a block is the server's address instead.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { killAll, removeDir, ROOT, startServer, tempDir, waitFor, type ServerProcess } from '../support/child-server.js';

interface Block {
  file: string;
  line: number;
  lang: string;
  code: string;
}

const FILES = ['README.md', 'sdk/README.md', 'python/README.md'];

/** The fenced blocks of a Markdown file, with the line of their opening fence. */
function blocks(file: string): Block[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const found: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    while (++i < lines.length && !lines[i]!.startsWith('```')) body.push(lines[i]!);
    found.push({ file, line: start + 1, lang: open[1] ?? '', code: body.join('\n') });
  }
  return found;
}

/** The blocks not run, by file and the start of their first line, with why. Output and layout blocks (no language) are never run. */
const NOT_RUN: { file: string; starts: string; why: string }[] = [
  { file: 'README.md', starts: 'npm ci && npm start', why: 'the install and start this suite runs the server of (CI runs npm ci)' },
  { file: 'README.md', starts: 'npm test', why: 'this very suite' },
  { file: 'README.md', starts: 'export MEMORY_API_KEY=mem_...', why: 'sets the key this suite sets' },
  { file: 'README.md', starts: 'pip install ./python', why: 'test/python/sdk.test.ts installs the package so' },
  { file: 'README.md', starts: 'npm run dynamodb-local', why: 'test/e2e/aws-shaped-process.test.ts runs DynamoDB Local' },
  { file: 'README.md', starts: 'MEMORY_BACKEND=dynamodb DYNAMODB_ENDPOINT=http://127.0.0.1:8000 npm start', why: 'needs DynamoDB Local on its default port; test/e2e/aws-shaped-process.test.ts' },
  { file: 'README.md', starts: 'DYNAMODB_ENDPOINT=http://127.0.0.1:8000 npm run --silent admin', why: 'needs DynamoDB Local on its default port; test/e2e/aws-shaped-process.test.ts' },
  { file: 'README.md', starts: 'MEMORY_METRICS_PORT=9464 npm start', why: 'a second server on a fixed port; test/e2e/metrics-server.test.ts starts npm start with MEMORY_METRICS_PORT and scrapes the URL it prints' },
  { file: 'sdk/README.md', starts: 'cd sdk && npm pack', why: 'test/sdk/pack.test.ts packs and installs the SDK' },
  { file: 'python/README.md', starts: 'python3 -m venv .venv', why: 'installs from a package index, which CI has not; test/python/sdk.test.ts installs offline' },
  { file: 'python/README.md', starts: '/usr/bin/python3 -m venv --system-site-packages', why: 'test/python/sdk.test.ts installs the package so' },
  { file: 'python/README.md', starts: '/usr/bin/python3 -m pip wheel', why: 'test/sdk/pack.test.ts builds the wheel' },
  { file: 'python/README.md', starts: 'export MEMORY_API_KEY=mem_...', why: 'sets the key this suite sets' },
  { file: 'python/README.md', starts: 'def remember(', why: 'an excerpt of python/examples/memory_tool.py, which test/python runs whole' },
  { file: 'python/README.md', starts: 'PYTHONPATH=python/src:python python3 -m unittest', why: 'the Python suite, which test/python/sdk.test.ts runs' },
];

const notRun = (block: Block) => NOT_RUN.find((n) => n.file === block.file && block.code.startsWith(n.starts));
const ALL = FILES.flatMap(blocks);
const RUN = ALL.filter((block) => block.lang !== '' && !notRun(block));

/** A synopsis line rather than a command: it holds a placeholder. */
const PLACEHOLDER = /<[a-z_ ]+>|\[--|…|mem_\.\.\./;

/** The commands of an `sh` block: comments dropped, continuations joined, synopsis lines left out. */
function commands(code: string): string[] {
  const joined = code.replace(/\\\n/g, ' ').split('\n');
  return joined.map((line) => line.replace(/\s+#.*$/, '').trim()).filter((line) => line !== '' && !line.startsWith('#') && !PLACEHOLDER.test(line));
}

const TS_PRELUDE = `import { MemoryClient, MemoryApiError, MemoryForbiddenError, MemoryVersionConflictError } from '@agent-memory/sdk';
const baseUrl = process.env.MEMORY_API_URL!;
const apiKey = process.env.MEMORY_API_KEY!;
const memory = new MemoryClient({ baseUrl, apiKey });
const record = { agent_id: 'docs-test', type: 'fact' as const, title: 'A record of the docs test', body: 'Made by the prelude.' };
const { id } = await memory.remember(record);
void [MemoryApiError, MemoryForbiddenError, MemoryVersionConflictError, id];
`;

const PYTHON_PRELUDE = `import os
from agent_memory import MemoryClient
memory = MemoryClient(os.environ["MEMORY_API_URL"], os.environ["MEMORY_API_KEY"])
`;

let server: ServerProcess;
let dataDir: string;
let work: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  dataDir = tempDir('memory-docs-');
  work = tempDir('memory-docs-cwd-');
  // Roomy limits: the examples run back to back, faster than a person types them.
  server = await startServer(dataDir, { MEMORY_DEFAULT_RATE: '1000', MEMORY_DEFAULT_BURST: '1000' });
  const printed = /Its API key, shown only this once:\s+(mem_\S+)/;
  await waitFor(() => printed.test(server.stdout()), 5000, 'the first key');
  const key = printed.exec(server.stdout())![1]!;
  expect(new URL(server.url).port).not.toBe('8787');
  env = { PATH: process.env.PATH, HOME: process.env.HOME, MEMORY_API_URL: server.url, MEMORY_API_KEY: key, MEMORY_DATA_DIR: dataDir, LOG_LEVEL: 'SILENT' };
}, 30_000);

afterAll(async () => {
  await server?.stop();
  killAll();
  removeDir(dataDir);
  removeDir(work);
});

function run(command: string, args: string[], extra: NodeJS.ProcessEnv = {}, cwd = work) {
  const done = spawnSync(command, args, { cwd, env: { ...env, ...extra }, encoding: 'utf8', timeout: 60_000 });
  return { code: done.status, output: `${done.stdout ?? ''}${done.stderr ?? ''}`.slice(-4000) };
}

/** The block's text with the default address replaced by the server's. */
const onServer = (code: string) => code.replaceAll('http://127.0.0.1:8787', server.url);

test('every fenced example is run here or named, with why, among those that are not', () => {
  const unrun = ALL.filter((block) => block.lang !== '' && notRun(block));
  // A name that matches no block any more is a stale entry: the example it excused is gone or changed.
  expect(NOT_RUN.filter((n) => !unrun.some((block) => block.file === n.file && block.code.startsWith(n.starts)))).toEqual([]);
  expect(new Set(RUN.map((block) => block.lang))).toEqual(new Set(['sh', 'ts', 'python']));
});

describe.each(FILES)('%s', (file) => {
  const runnable = RUN.filter((block) => block.file === file);
  test.each(runnable.map((block) => [`${block.lang} at line ${block.line}`, block] as const))('the %s runs as written', (_name, block) => {
    let result: { code: number | null; output: string };
    if (block.lang === 'sh') {
      const lines = commands(onServer(block.code));
      expect(lines.length).toBeGreaterThan(0);
      const script = [
        'set -euo pipefail',
        'curl() { command curl --fail-with-body "$@"; }',
        `npm() { command npm --prefix ${JSON.stringify(ROOT)} "$@"; }`,
        ...lines,
      ].join('\n');
      result = run('bash', ['-c', script]);
    } else if (block.lang === 'ts') {
      const own = /^import /m.test(block.code);
      const source = (own ? onServer(block.code) : `${TS_PRELUDE}{\n${onServer(block.code)}\n}\n`).replaceAll("'@agent-memory/sdk'", JSON.stringify(join(ROOT, 'sdk/src/index.ts')));
      const path = join(work, `example-${block.line}.mts`);
      writeFileSync(path, `${source}\nexport {};\n`);
      // From the project, where `--import tsx` resolves.
      result = run(process.execPath, ['--import', 'tsx', path], {}, ROOT);
    } else if (block.lang === 'python') {
      result = run('python3', ['-c', `${PYTHON_PRELUDE}${onServer(block.code)}`], { PYTHONPATH: join(ROOT, 'python', 'src') });
    } else {
      throw new Error(`a ${block.lang} block at ${block.file}:${block.line}: run it here, or name it in NOT_RUN`);
    }
    if (result.code !== 0) throw new Error(`${block.file}:${block.line} exited with ${result.code}:\n${result.output}`);
  });
});
