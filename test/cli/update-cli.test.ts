import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { programCommand, runCommand, type AdminResult } from '../support/child-server.js';
import { clientEnv, startApi, type RunningApi } from '../mcp/helpers.js';

/**
 * The memory CLI's `update`, `remember --supersedes` and `--include-superseded`, as a child process against
 * the local server, also a child process.
 */

let api: RunningApi;

/** The memory CLI with `args`, the running API's settings, `input` on its stdin. */
function memory(args: string[], input = ''): Promise<AdminResult> {
  const { command, args: launch } = programCommand('memory');
  return runCommand(command, [...launch, ...args], clientEnv({ MEMORY_API_URL: api.url, MEMORY_API_KEY: api.key }), input);
}

/** Stores a record through the CLI and answers its id. */
async function remember(title: string, ...extra: string[]): Promise<string> {
  const result = await memory(['remember', '--agent', 'cli-update', '--type', 'fact', '--title', title, '--body', 'From the shell.', ...extra]);
  if (result.code !== 0) throw new Error(`remember failed: ${JSON.stringify(result.error)}`);
  return result.json.id;
}

beforeAll(async () => {
  api = await startApi();
});

afterAll(async () => {
  await api?.stop();
});

describe('memory update', () => {
  test('changes the fields given and prints the record one version on; --no-client removes, --body - reads stdin', async () => {
    const id = await remember('The Tallowmere office code is 1234', '--client', 'acme', '--metadata', '{"source":"cli"}');
    const result = await memory(['update', id, '--title', 'The Tallowmere office code is 4321', '--no-client', '--body', '-'], 'Changed on Monday.\n');
    expect(result.code).toBe(0);
    expect(result.json).toMatchObject({ id, title: 'The Tallowmere office code is 4321', body: 'Changed on Monday.\n', client: null, metadata: { source: 'cli' }, version: 2 });
    expect(result.json.updated_at).toEqual(expect.any(String));
    const metadata = await memory(['update', id, '--metadata', '{"source":"admin"}', '--type', 'decision']);
    expect(metadata.json).toMatchObject({ metadata: { source: 'admin' }, type: 'decision', version: 3 });
    expect((await memory(['update', id, '--no-metadata'])).json).toMatchObject({ metadata: null, version: 4 });
    expect((await memory(['recall', 'Tallowmere'])).json.map((h: { title: string }) => h.title)).toEqual(['The Tallowmere office code is 4321']);
  });

  test('--if-version applies at that version only: a stale one is version_conflict, exit code 1, and nothing changes', async () => {
    const id = await remember('The Tallowmere standup is at 9:00');
    expect((await memory(['update', id, '--body', 'Agreed.', '--if-version', '1'])).json).toMatchObject({ version: 2 });
    const stale = await memory(['update', id, '--title', 'The Tallowmere standup is at 9:30', '--if-version', '1']);
    expect(stale.code).toBe(1);
    expect(stale.error).toMatchObject({ error: 'version_conflict', message: expect.any(String) });
    expect((await memory(['get', id])).json).toMatchObject({ title: 'The Tallowmere standup is at 9:00', version: 2 });
  });

  test('usage errors, exit code 2: no field, no id, --client with --no-client, a bad --if-version, an option update does not take', async () => {
    const id = await remember('A record the shell gets wrong');
    const cases: [string[], RegExp][] = [
      [['update', id], /needs at least one of --title/],
      [['update', '--title', 'x'], /update takes one argument: update <id>/],
      [['update', id, '--client', 'a', '--no-client'], /give --client or --no-client, not both/],
      [['update', id, '--title', 'x', '--if-version', '0'], /--if-version must be a record version/],
      [['update', id, '--title', 'x', '--if-version', 'two'], /--if-version must be a record version/],
      [['update', id, '--agent', 'other'], /update does not take --agent/],
      [['recall', 'x', '--supersedes', id], /recall does not take --supersedes/],
    ];
    for (const [args, message] of cases) {
      const result = await memory(args);
      expect({ args, code: result.code, error: result.error?.error }).toEqual({ args, code: 2, error: 'usage' });
      expect(result.error.message).toMatch(message);
    }
    expect((await memory(['get', id])).json.version).toBe(1);
  });

  test('an unknown id is not_found, exit code 1', async () => {
    const result = await memory(['update', '01930000-0000-7000-8000-000000000000', '--title', 'x']);
    expect(result).toMatchObject({ code: 1, error: { error: 'not_found' } });
  });
});

describe('memory remember --supersedes and --include-superseded', () => {
  test('the old records leave recall, list and export, which show them again with --include-superseded', async () => {
    const dark = await remember('The Brindlecombe user prefers dark mode');
    const large = await remember('The Brindlecombe user prefers large fonts');
    const light = await remember('The Brindlecombe user switched to light mode and normal fonts', '--supersedes', dark, '--supersedes', large);
    for (const old of [dark, large]) expect((await memory(['get', old])).json.superseded_by).toBe(light);

    const recalled = await memory(['recall', 'Brindlecombe', 'mode', 'fonts']);
    expect(recalled.json.map((h: { id: string }) => h.id)).toEqual([light]);
    const all = await memory(['recall', 'Brindlecombe', 'mode', 'fonts', '--include-superseded']);
    expect(all.json.map((h: { id: string }) => h.id).sort()).toEqual([dark, large, light].sort());

    expect((await memory(['list', '--agent', 'cli-update', '--limit', '100'])).json.records.map((r: { id: string }) => r.id)).not.toContain(dark);
    const listed = await memory(['list', '--agent', 'cli-update', '--limit', '100', '--include-superseded']);
    expect(listed.json.records.map((r: { id: string }) => r.id)).toEqual(expect.arrayContaining([dark, large, light]));

    const exported = (await memory(['export', '--agent', 'cli-update'])).stdout.trim().split('\n').map((line) => JSON.parse(line).id);
    expect(exported).toContain(light);
    expect(exported).not.toContain(dark);
    const everything = (await memory(['export', '--agent', 'cli-update', '--include-superseded'])).stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(everything.find((r) => r.id === dark)).toMatchObject({ superseded_by: light });
  });

  test('superseding an unknown id is not_found, naming it, and stores nothing', async () => {
    const missing = '01930000-0000-7000-8000-00000000cafe';
    const result = await memory(['remember', '--agent', 'cli-ghost', '--type', 'fact', '--title', 'Replaces a ghost', '--body', 'b', '--supersedes', missing]);
    expect(result.code).toBe(1);
    expect(result.error).toMatchObject({ error: 'not_found', message: expect.stringContaining(missing) });
    expect((await memory(['list', '--agent', 'cli-ghost', '--include-superseded'])).json.records).toEqual([]);
  });
});
