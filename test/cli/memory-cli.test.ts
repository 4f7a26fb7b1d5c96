import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { programCommand, ROOT, runCommand } from '../support/child-server.js';
import { startTestService, type TestService } from '../support/local-service.js';
import { clientEnv, startApi, type RunningApi } from '../mcp/helpers.js';

/**
 * The end-user CLI (`npm run --silent memory -- …`) as a child process against the local server, also a
 * child process: JSON answers on stdout, `{"error","message"}` on stderr with exit code 1 (2 for a
 * malformed command).
 */

/** Runs a command with the client settings `env` (and nothing of the developer's), writing `input` to its stdin. */
const run = (command: string, args: string[], env: Record<string, string>, input = '') => runCommand(command, args, clientEnv(env), input);

let api: RunningApi;
let env: Record<string, string>;

const MEMORY = programCommand('memory');

/** The memory CLI with the settings of the running API. */
const memory = (args: string[], input = '', overrides: Record<string, string> = {}) =>
  run(MEMORY.command, [...MEMORY.args, ...args], { ...env, ...overrides }, input);

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

  test('recall --until keeps records created before it (exclusive), and a bad one is invalid_until', async () => {
    const kept = await memory(['recall', 'pelican', 'quote', '--type', 'open_item', '--since', '2020-01-01', '--until', '2999-01-01']);
    expect(kept.json.map((hit: { id: string }) => hit.id)).toEqual([stored.id]);
    const at = (await memory(['get', stored.id])).json.created_at as string;
    expect((await memory(['recall', 'pelican', 'quote', '--type', 'open_item', '--until', at])).json).toEqual([]);
    const bad = await memory(['recall', 'pelican', '--until', 'tomorrow']);
    expect(bad).toMatchObject({ code: 1, stdout: '', error: { error: 'invalid_until' } });
  });

  test('recall --min-rank leaves out the hits ranked below it; a bad one is a usage error or invalid_min_rank', async () => {
    const all = await memory(['recall', 'pelican', 'quote', 'zyxwvut']);
    expect(all.json.map((hit: { id: string }) => hit.id)).toContain(stored.id);
    const rank = all.json.find((hit: { id: string; rank: number }) => hit.id === stored.id).rank as number;
    expect((await memory(['recall', 'pelican', 'quote', 'zyxwvut', '--min-rank', String(rank)])).json.map((hit: { id: string }) => hit.id)).toContain(stored.id);
    expect((await memory(['recall', 'pelican', 'quote', 'zyxwvut', '--min-rank', '1'])).json).toEqual([]);
    expect(await memory(['recall', 'pelican', '--min-rank', 'high'])).toMatchObject({ code: 2, error: { error: 'usage', message: '--min-rank must be a number from 0 to 1' } });
    expect(await memory(['recall', 'pelican', '--min-rank', '1.5'])).toMatchObject({ code: 1, stdout: '', error: { error: 'invalid_min_rank' } });
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
      memory(['teleport', 'everything']),
      memory(['recall', '--limit', 'ten']),
      memory(['remember', '--agent', 'a', '--type', 'fact', '--title', 't', '--body', 'b', '--metadata', '{oops']),
      memory(['recall'], '', { MEMORY_API_KEY: '' }),
      memory(['--help']),
    ]);
    expect(missing).toMatchObject({ code: 2, stdout: '', error: { error: 'usage', message: 'remember needs --title' } });
    expect(unknownOption).toMatchObject({ code: 2, error: { error: 'usage', message: expect.stringContaining("'--colour'") } });
    expect(unknownCommand).toMatchObject({ code: 2, error: { error: 'usage', message: expect.stringContaining('unknown command: teleport') } });
    expect(badLimit).toMatchObject({ code: 2, error: { error: 'usage', message: '--limit must be an integer from 1 to 100' } });
    expect(badMetadata).toMatchObject({ code: 2, error: { error: 'usage', message: expect.stringContaining('--metadata must be JSON') } });
    expect(noKey).toMatchObject({ code: 1, stdout: '', error: { error: 'config', message: expect.stringContaining('MEMORY_API_KEY is not set') } });
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: npm run --silent memory -- <command>/);
  });

  test('the documented form, npm run --silent memory -- …, prints only the JSON', async () => {
    const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts ?? {};
    if (scripts.memory === undefined) throw new Error('package.json has no "memory" script: add "memory": "node scripts/launch.mjs memory"');
    const result = await run('npm', ['run', '--silent', 'memory', '--', 'recall', 'pelican', '--limit', '1'], env);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.json).toEqual([expect.objectContaining({ title: expect.stringContaining('Pelican') })]);
  });
});

describe('the memory CLI: get, list, delete, forget and export', () => {
  // The service in process, with roomy limits: the export stores a few hundred records at once, more than
  // the first key of \`npm start\` may write a second.
  let service: TestService;
  let cli: typeof memory;
  beforeAll(async () => {
    service = await startTestService();
    const settings = { MEMORY_API_URL: service.url, MEMORY_API_KEY: service.tenant.api_key };
    cli = (args, input = '', overrides = {}) => memory(args, input, { ...settings, ...overrides });
  });
  afterAll(async () => {
    await service?.stop();
  });

  const UNKNOWN_ID = '01930000-0000-7000-8000-000000000000';
  /** Stores records straight through the API: quicker than a CLI process each. */
  const store = async (records: Record<string, unknown>[]) => {
    const client = service.client(service.tenant.api_key);
    const ids: string[] = [];
    for (const record of records) {
      const response = await client.remember({ type: 'fact', body: 'Stored for the CLI test.', ...record });
      if (response.status !== 201) throw new Error(`store: ${response.status} ${JSON.stringify(response.body)}`);
      ids.push(response.body.id);
    }
    return ids;
  };

  test('get prints the record; an unknown id is not_found, exit code 1', async () => {
    const [id] = await store([{ agent_id: 'cli-get', title: 'A record to read back', client: 'acme', metadata: { n: 1 } }]);
    const [result, unknown] = await Promise.all([cli(['get', id!]), cli(['get', UNKNOWN_ID])]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.json).toEqual({
      id, agent_id: 'cli-get', type: 'fact', title: 'A record to read back', body: 'Stored for the CLI test.', client: 'acme',
      metadata: { n: 1 }, created_at: expect.any(String), classification: result.json.classification, version: 1, updated_at: null, superseded_by: null,
    });
    expect(unknown).toMatchObject({ code: 1, stdout: '', error: { error: 'not_found' } });
  });

  test('list prints one page as the API answers it, and --cursor the next; other filters with it are invalid_cursor', async () => {
    const ids = await store([1, 2, 3].map((i) => ({ agent_id: 'cli-list', title: `Listed from the shell ${i}`, type: i === 2 ? 'decision' : 'fact' })));
    const first = await cli(['list', '--agent', 'cli-list', '--limit', '2']);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.json.records.map((r: { id: string }) => r.id)).toEqual([ids[2], ids[1]]);
    expect(first.json.next_cursor).toEqual(expect.any(String));
    const [second, asc, otherFilters, badUntil] = await Promise.all([
      cli(['list', '--agent-id', 'cli-list', '--limit', '2', '--cursor', first.json.next_cursor]),
      cli(['list', '--agent', 'cli-list', '--order', 'asc', '--type', 'fact', '--since', '2020-01-01', '--until', '2999-01-01']),
      cli(['list', '--agent', 'someone-else', '--cursor', first.json.next_cursor]),
      cli(['list', '--until', 'soon']),
    ]);
    expect(second.json).toEqual({ records: [expect.objectContaining({ id: ids[0] })], next_cursor: null });
    expect(asc.json.records.map((r: { id: string }) => r.id)).toEqual([ids[0], ids[2]]);
    expect(otherFilters).toMatchObject({ code: 1, stdout: '', error: { error: 'invalid_cursor' } });
    expect(badUntil).toMatchObject({ code: 1, stdout: '', error: { error: 'invalid_until' } });
  });

  test('delete prints {id, deleted_at}; deleting again is not_found', async () => {
    const [id] = await store([{ agent_id: 'cli-delete', title: 'A record to delete from the shell' }]);
    const deleted = await cli(['delete', id!]);
    expect(deleted).toMatchObject({ code: 0, stderr: '', json: { id, deleted_at: expect.any(String) } });
    const [got, again] = await Promise.all([cli(['get', id!]), cli(['delete', id!])]);
    expect(got).toMatchObject({ code: 1, error: { error: 'not_found' } });
    expect(again).toMatchObject({ code: 1, stdout: '', error: { error: 'not_found' } });
  });

  test('forget --dry-run counts; forget deletes what matches every selector; no selector is missing_field', async () => {
    const ids = await store([
      { agent_id: 'cli-forget', title: 'Forgettable one', client: 'acme' },
      { agent_id: 'cli-forget', title: 'Forgettable two', client: 'acme' },
      { agent_id: 'cli-forget', title: 'Forgettable three', client: 'globex' },
    ]);
    const [dry, none, status] = await Promise.all([
      cli(['forget', '--agent', 'cli-forget', '--client', 'acme', '--dry-run']),
      cli(['forget', '--dry-run']),
      cli(['forget-status', 'no-such-job']),
    ]);
    expect(dry).toMatchObject({ code: 0, stderr: '', json: { matched: 2, deleted: 0, dry_run: true } });
    expect((await service.client(service.tenant.api_key).request('GET', `/api/v1/record/${ids[0]}`)).status).toBe(200);

    const [done, byIds] = await Promise.all([
      cli(['forget', '--agent', 'cli-forget', '--client', 'acme']),
      cli(['forget', '--id', ids[2]!, '--id', UNKNOWN_ID, '--type', 'fact', '--before', '2999-01-01']),
    ]);
    expect(done).toMatchObject({ code: 0, json: { matched: 2, deleted: 2, dry_run: false } });
    expect(byIds).toMatchObject({ code: 0, json: { matched: 1, deleted: 1, dry_run: false } });
    for (const id of ids) expect((await service.client(service.tenant.api_key).request('GET', `/api/v1/record/${id}`)).status).toBe(404);

    expect(none).toMatchObject({ code: 1, stdout: '', error: { error: 'missing_field', message: expect.stringContaining('at least one of') } });
    expect(status).toMatchObject({ code: 1, stdout: '', error: { error: 'not_found' } });
  });

  test('export streams every matching record as NDJSON, oldest first, across pages; stderr stays empty', async () => {
    const ids = await store(Array.from({ length: 230 }, (_, i) => ({ agent_id: 'cli-export', title: `Exported record ${i}`, type: i % 2 ? 'fact' : 'signal' })));
    await store([{ agent_id: 'cli-not-exported', title: 'Another agent' }]);
    const result = await cli(['export', '--agent', 'cli-export']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout.endsWith('\n')).toBe(true);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(230);
    const records = lines.map((line) => JSON.parse(line) as { id: string; agent_id: string; classification: unknown });
    // Oldest first is the listing's order, by created_at then id: records written in the same millisecond
    // come in the order of their ids, whatever order they were written in. A UUIDv7 starts with its
    // record's created_at, to the millisecond, so that order is the ids' own.
    const oldestFirst = [...ids].sort();
    expect(records.map((r) => r.id)).toEqual(oldestFirst);
    expect(records[0]).toEqual(expect.objectContaining({ agent_id: 'cli-export', title: `Exported record ${ids.indexOf(oldestFirst[0]!)}` }));
    expect(Object.keys(records[0]!).sort()).toEqual(['agent_id', 'body', 'classification', 'client', 'created_at', 'id', 'metadata', 'superseded_by', 'title', 'type', 'updated_at', 'version']);

    const [signals, none] = await Promise.all([cli(['export', '--agent', 'cli-export', '--type', 'signal', '--progress']), cli(['export', '--agent', 'nobody'])]);
    expect(signals.code).toBe(0);
    expect(signals.stdout.trimEnd().split('\n')).toHaveLength(115);
    // --progress: a line after each full page, then the total.
    expect(signals.stderr).toMatch(/^export: 100 records so far \(\d+\.\d s\)\nexport: 115 records in \d+\.\d s\n$/);
    expect(none).toMatchObject({ code: 0, stdout: '', stderr: '' });
  });

  test('export into a reader that stops early ends quietly', async () => {
    const command = `set -o pipefail; ${[MEMORY.command, ...MEMORY.args].map((a) => `"${a}"`).join(' ')} export | head -n 2`;
    const result = await run('bash', ['-c', command], { MEMORY_API_URL: service.url, MEMORY_API_KEY: service.tenant.api_key });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout.trimEnd().split('\n')).toHaveLength(2);
  });

  test("usage prints the month's use against the quotas as the API answers it; it counts nothing", async () => {
    const tenant = await service.newTenant({ recordQuota: 30, queryQuota: 20, rate: 100, burst: 200 });
    const api = service.client(tenant.api_key);
    for (const title of ['Counted one', 'Counted two']) {
      expect((await api.remember({ agent_id: 'cli-usage', type: 'fact', title, body: 'Stored for the CLI test.' })).status).toBe(201);
    }
    expect((await api.recall({ q: 'counted' })).status).toBe(200);
    const result = await cli(['usage'], '', { MEMORY_API_KEY: tenant.api_key });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.json).toEqual({
      tenant_id: tenant.tenant_id,
      month: expect.stringMatching(/^\d{4}-\d{2}$/),
      records: { used: 2, quota: 30, remaining: 28 },
      queries: { used: 1, quota: 20, remaining: 19 },
      rate_limit: { rate: 100, burst: 200 },
      key: { scopes: ['read', 'write', 'delete'], agent_id: null, expires_at: null },
    });
    expect(result.stdout).toBe(`${JSON.stringify(result.json, null, 2)}\n`);
    const [again, extraArg, extraOption, badKey] = await Promise.all([
      cli(['usage'], '', { MEMORY_API_KEY: tenant.api_key }),
      cli(['usage', 'now']),
      cli(['usage', '--since', '2026-01-01']),
      cli(['usage'], '', { MEMORY_API_KEY: 'mem_wrong' }),
    ]);
    expect(again.json).toEqual(result.json);
    expect(extraArg).toMatchObject({ code: 2, stdout: '', error: { error: 'usage', message: 'usage takes no arguments, only options: now' } });
    expect(extraOption).toMatchObject({ code: 2, stdout: '', error: { error: 'usage', message: 'usage does not take --since' } });
    expect(badKey).toMatchObject({ code: 1, stdout: '', error: { error: 'unauthorized' } });
  });

  test('usage errors: a missing or extra argument, both spellings of --agent, an option another command takes', async () => {
    const [noId, twoIds, bothAgents, wrongOption, forgetArgs] = await Promise.all([
      cli(['get']),
      cli(['delete', 'a', 'b']),
      cli(['list', '--agent', 'a', '--agent-id', 'b']),
      cli(['export', '--limit', '5']),
      cli(['forget', 'everything']),
    ]);
    expect(noId).toMatchObject({ code: 2, error: { error: 'usage', message: 'get takes one argument: get <id>' } });
    expect(twoIds).toMatchObject({ code: 2, error: { error: 'usage', message: 'delete takes one argument: delete <id>' } });
    expect(bothAgents).toMatchObject({ code: 2, error: { error: 'usage', message: 'give --agent or --agent-id, not both' } });
    expect(wrongOption).toMatchObject({ code: 2, error: { error: 'usage', message: 'export does not take --limit' } });
    expect(forgetArgs).toMatchObject({ code: 2, error: { error: 'usage', message: 'forget takes no arguments, only options: everything' } });
  });
});
