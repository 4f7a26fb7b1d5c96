import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ROOT } from '../support/child-server.js';
import { clientEnv, startApi, type RunningApi } from '../mcp/helpers.js';

/**
 * The end-user CLI (`npm run --silent memory -- …`) as a child process against the local server, also a
 * child process: JSON answers on stdout, `{"error","message"}` on stderr with exit code 1 (2 for a
 * malformed command).
 */

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  json: any;
  error: any;
}

const parse = (text: string) => {
  try {
    return text.trim() === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** Runs a command and waits for it, writing `input` to its stdin. */
function run(command: string, args: string[], env: Record<string, string>, input = ''): Promise<Run> {
  const child = spawn(command, args, { cwd: ROOT, env: clientEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  child.stdin.end(input);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr, json: parse(stdout), error: parse(stderr) }));
  });
}

let api: RunningApi;
let env: Record<string, string>;

/** `cli/memory.ts` with the settings of the running API. */
const memory = (args: string[], input = '', overrides: Record<string, string> = {}) =>
  run(process.execPath, ['--import', 'tsx', 'cli/memory.ts', ...args], { ...env, ...overrides }, input);

beforeAll(async () => {
  api = await startApi();
  env = { MEMORY_API_URL: api.url, MEMORY_API_KEY: api.key };
});

afterAll(async () => {
  await api?.stop();
});

describe('the memory CLI', () => {
  let stored: { id: string };

  test('remember stores a record and prints the receipt', async () => {
    const result = await memory([
      'remember', '--agent', 'shell-agent', '--type', 'open_item', '--title', 'Send Acme the revised Pelican quote by Friday',
      '--body', 'Promised on the call with their CFO.', '--client', 'acme', '--metadata', '{"source":"cli"}',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    stored = result.json;
    expect(Object.keys(stored).sort()).toEqual(['created_at', 'id', 'tenant_id']);
  });

  test('--body - reads the body from stdin', async () => {
    const body = 'Line one of a note piped in.\nLine two, with "quotes" and ünïcode.\n';
    const result = await memory(['remember', '--agent', 'shell-agent', '--type', 'fact', '--title', 'A note about Pelican from stdin', '--body', '-'], body);
    expect(result.code).toBe(0);
    const recalled = await memory(['recall', 'note', 'stdin']);
    expect(recalled.json[0]).toMatchObject({ id: result.json.id, body });
  });

  test('recall takes its words as arguments and prints the hits, with filters', async () => {
    const result = await memory(['recall', 'revised', 'pelican', 'quote', '--type', 'open_item', '--agent', 'shell-agent', '--client', 'acme', '--since', '2020-01-01', '--limit', '5']);
    expect(result.code).toBe(0);
    expect(result.json).toEqual([
      expect.objectContaining({
        id: stored.id,
        type: 'open_item',
        title: 'Send Acme the revised Pelican quote by Friday',
        body: 'Promised on the call with their CFO.',
        client: 'acme',
        metadata: { source: 'cli' },
      }),
    ]);
    const newest = await memory(['recall', '--limit', '1']);
    expect(newest.json).toHaveLength(1);
  });

  test('classify prints the suggestion', async () => {
    const result = await memory(['classify', '--title', 'We decided to move the nightly job to 2am', '--body', 'Agreed in the ops review.']);
    expect(result.code).toBe(0);
    expect(result.json).toMatchObject({ type: 'decision', scores: expect.any(Object) });
  });

  test('an error of the API prints its code and message on stderr and exits with 1', async () => {
    const [badType, badKey, reused] = await Promise.all([
      memory(['remember', '--agent', 'a', '--type', 'fiction', '--title', 't', '--body', 'b']),
      memory(['recall', 'pelican'], '', { MEMORY_API_KEY: 'mem_wrong' }),
      memory(['remember', '--agent', 'a', '--type', 'fact', '--title', 't', '--body', 'b', '--idempotency-key', 'cli-1']).then(() =>
        memory(['remember', '--agent', 'a', '--type', 'fact', '--title', 'other', '--body', 'b', '--idempotency-key', 'cli-1']),
      ),
    ]);
    expect(badType).toMatchObject({ code: 1, stdout: '', error: { error: 'invalid_type', message: expect.stringContaining('fact, decision') } });
    expect(badKey).toMatchObject({ code: 1, stdout: '', error: { error: 'unauthorized', message: expect.any(String) } });
    expect(reused).toMatchObject({ code: 1, stdout: '', error: { error: 'idempotency_key_reused' } });
  });

  test('no answer from the API is connection_failed, exit code 1', async () => {
    const result = await memory(['recall'], '', { MEMORY_API_URL: 'http://127.0.0.1:9' });
    expect(result).toMatchObject({ code: 1, stdout: '', error: { error: 'connection_failed', message: expect.stringContaining('http://127.0.0.1:9') } });
  });

  test('a malformed command exits with 2; a missing key with 1; --help prints the usage', async () => {
    const [missing, unknownOption, unknownCommand, badLimit, badMetadata, noKey, help] = await Promise.all([
      memory(['remember', '--agent', 'a', '--type', 'fact', '--body', 'b']),
      memory(['recall', '--colour', 'red']),
      memory(['forget', 'everything']),
      memory(['recall', '--limit', 'ten']),
      memory(['remember', '--agent', 'a', '--type', 'fact', '--title', 't', '--body', 'b', '--metadata', '{oops']),
      memory(['recall'], '', { MEMORY_API_KEY: '' }),
      memory(['--help']),
    ]);
    expect(missing).toMatchObject({ code: 2, stdout: '', error: { error: 'usage', message: 'remember needs --title' } });
    expect(unknownOption).toMatchObject({ code: 2, error: { error: 'usage', message: expect.stringContaining("'--colour'") } });
    expect(unknownCommand).toMatchObject({ code: 2, error: { error: 'usage', message: expect.stringContaining('unknown command: forget') } });
    expect(badLimit).toMatchObject({ code: 2, error: { error: 'usage', message: '--limit must be an integer from 1 to 100' } });
    expect(badMetadata).toMatchObject({ code: 2, error: { error: 'usage', message: expect.stringContaining('--metadata must be JSON') } });
    expect(noKey).toMatchObject({ code: 1, stdout: '', error: { error: 'config', message: expect.stringContaining('MEMORY_API_KEY is not set') } });
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: npm run --silent memory -- <command>/);
  });

  test('the documented form, npm run --silent memory -- …, prints only the JSON', async () => {
    const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts ?? {};
    if (scripts.memory === undefined) throw new Error('package.json has no "memory" script: add "memory": "tsx cli/memory.ts"');
    const result = await run('npm', ['run', '--silent', 'memory', '--', 'recall', 'pelican', '--limit', '1'], env);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.json).toEqual([expect.objectContaining({ title: expect.stringContaining('Pelican') })]);
  });
});
