import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { v7 as uuidv7 } from 'uuid';
import { adminCommand, CliError } from '../../local/admin.js';
import { dynamoDbAdapters } from '../../shared/adapters/aws/dynamodb/index.js';
import { openSqliteAdapters } from '../../shared/adapters/local/index.js';
import { hashApiKey } from '../../shared/domain/api-key.js';
import { quotaMonth } from '../../shared/domain/quota-month.js';
import { publicRecord, RECORD_TYPES, type StoredRecord } from '../../shared/domain/record.js';
import type { KeyStore, RecordStore, UsageMeter } from '../../shared/ports.js';
import { killAll, parseJson, removeDir, runProgram, tempDir } from '../support/child-server.js';
import { createTestTables, describeWithDynamoDb, type TestTables } from '../support/dynamodb.js';
import { Client, ROOMY, startTestService, type TestService } from '../support/local-service.js';
import { createTenantWithKey } from '../../local/tenants.js';

/**
 * The admin CLI's data commands (tenant update, tenant delete, export, import) on both backends. On SQLite
 * the CLI runs as a child process, as an operator runs it (stdout, stderr, exit codes, stdin), beside a
 * running service for the check that a deleted tenant's key answers 401. On DynamoDB Local it runs in
 * process (adminCommand with the same streams), which checks the same commands on the other stores
 * without a process start per command. The stores are read directly to compare records field by field.
 */

interface Run {
  code: number;
  stdout: string;
  /** stdout parsed as JSON, or undefined. */
  json: any;
  /** Each stderr line, parsed as JSON. */
  stderr: any[];
}

const jsonLines = (text: string) => text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));

/** The CLI as a child process, with `stdin` piped in. */
async function runProcess(args: string[], env: Record<string, string>, stdin = ''): Promise<Run> {
  const { code, stdout, json, stderr } = await runProgram('admin', args, env, stdin);
  return { code: code ?? -1, stdout, json, stderr: jsonLines(stderr) };
}

/** The CLI in process: what the entry point would print, from adminCommand with captured streams. */
async function runInProcess(args: string[], env: Record<string, string>, stdin = ''): Promise<Run> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
  const print = (result: unknown) => (out += typeof result === 'string' ? `${result}\n` : `${JSON.stringify(result)}\n`);
  let code = 0;
  try {
    const result = await adminCommand(args, env, undefined, { stdin: Readable.from([Buffer.from(stdin)]), stdout, stderr });
    if (result !== undefined) print(result);
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    if (error.output !== undefined) print(error.output);
    err += `${JSON.stringify({ error: error.code, message: error.message, ...error.details })}\n`;
    code = error.exitCode;
  }
  await new Promise((r) => setImmediate(r));
  return { code, stdout: out, json: parseJson(out), stderr: jsonLines(err) };
}

interface Stores {
  records: RecordStore;
  keys: KeyStore;
  usage: UsageMeter;
}

interface Backend {
  name: string;
  run(args: string[], stdin?: string): Promise<Run>;
  stores: Stores;
  /** A second, empty place with the same backend, for an import into a database that holds none of the ids. */
  elsewhere: { run(args: string[], stdin?: string): Promise<Run>; stores: Stores };
}

const BASE = Date.UTC(2024, 2, 1);
const MONTH = quotaMonth(new Date());

/**
 * Writes records the way the service does (create, then the classifier's setClassification), in an order
 * that is not their creation order, with twins in one millisecond, and every kind of field: metadata deep
 * and unicode, client or none, classification or none, updated once or twice (so with a version and an
 * updated_at) or never, superseded or current. One is deleted again. Returns the records as stored.
 */
async function seed(records: RecordStore, tenantId: string, count: number, label = 'r'): Promise<StoredRecord[]> {
  const written: StoredRecord[] = [];
  for (let i = 0; i < count; i++) {
    // Twins: records 2k and 2k+1 share a millisecond; the order of writing runs backwards in time.
    const ms = BASE + (count - i) * 997 - (i % 2);
    const id = uuidv7({ msecs: ms });
    const record: StoredRecord = {
      id,
      tenant_id: tenantId,
      agent_id: `agent-${i % 3}`,
      type: RECORD_TYPES[i % RECORD_TYPES.length]!,
      title: `${label} ${i}: décision über 😀 "quoted"`,
      body: `Body ${i}\nwith a line break, a tab\tand \u0000 a NUL.`,
      client: i % 2 === 0 ? `client-${i}` : null,
      metadata: i % 4 === 3 ? null : { n: i, nested: { list: [1, 2.5, -0.125, 'ü', null, true], empty: {} }, 'key with space': 'x' },
      created_at: new Date(ms).toISOString(),
      classification: null,
      version: 1,
      updated_at: null,
      superseded_by: null,
    };
    // Every fifth record supersedes the one written two before it (never the one deleted below).
    const supersedes = i % 5 === 4 ? { supersedes: { ids: [written[i - 2]!.id], agentId: null } } : {};
    await records.create(tenantId, record, { recordQuota: 1_000_000, month: MONTH, ...supersedes });
    for (let u = 0; u < i % 3; u++) {
      const patch = u === 0 ? { title: `${label} ${i}, updated: ça 😀`, client: null } : { metadata: { updated: u, list: [null, 'ü'] } };
      expect(await records.update(tenantId, id, patch, { at: new Date(ms + 2 + u) })).toMatchObject({ version: 2 + u });
    }
    if (i % 3 !== 2) {
      const classification = { type: RECORD_TYPES[(i + 1) % 6]!, confidence: 0.731, model: 'linear-v3', classified_at: new Date(ms + 5).toISOString() };
      expect(await records.setClassification(tenantId, id, classification)).toBe(true);
    }
    written.push((await records.get(tenantId, id))!);
  }
  // Read again: a record superseded after it was read has changed since.
  for (const [k, record] of written.entries()) written[k] = (await records.get(tenantId, record.id))!;
  const gone = written.splice(1, 1)[0]!;
  expect(await records.delete(tenantId, gone.id)).not.toBeNull();
  return written;
}

/** Every record of the tenant, oldest first, through the store's listing. */
async function all(records: RecordStore, tenantId: string): Promise<StoredRecord[]> {
  const found: StoredRecord[] = [];
  for (;;) {
    const last = found[found.length - 1];
    const page = await records.list(tenantId, { filters: { include_superseded: true }, order: 'asc', limit: 100, after: last && { created_at: last.created_at, id: last.id } });
    if (page.length === 0) return found;
    found.push(...page);
  }
}

const byPosition = (a: StoredRecord, b: StoredRecord) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id);

function dataCommands(backend: () => Backend) {
  test('tenant update changes only what it is given and prints the tenant; a name in use and an unknown tenant are refused', async () => {
    const { run, stores } = backend();
    const tenant = await stores.keys.createTenant({ name: 'to-update', limits: { ...ROOMY, rate: 5, burst: 6 } });
    await stores.keys.createTenant({ name: 'Taken Name', limits: ROOMY });
    const updated = await run(['tenant', 'update', '--tenant', tenant.tenant_id, '--query-quota', '0', '--burst', '9', '--name', ' Renamed ']);
    expect(updated).toMatchObject({ code: 0, stderr: [] });
    expect(updated.json).toEqual({
      tenant_id: tenant.tenant_id,
      name: 'Renamed',
      record_quota: ROOMY.recordQuota,
      query_quota: 0,
      rate: 5,
      burst: 9,
      created_at: tenant.created_at,
    });
    expect((await stores.keys.getTenant(tenant.tenant_id))?.limits).toEqual({ ...ROOMY, queryQuota: 0, rate: 5, burst: 9 });

    const [taken, unknown, ownName] = await Promise.all([
      run(['tenant', 'update', '--tenant', tenant.tenant_id, '--name', 'taken name']),
      run(['tenant', 'update', '--tenant', 'no-such-tenant', '--rate', '2']),
      run(['tenant', 'update', '--tenant', tenant.tenant_id, '--name', 'RENAMED']),
    ]);
    expect(taken).toMatchObject({ code: 1, stdout: '', stderr: [{ error: 'name_taken', tenant_id: expect.any(String) }] });
    expect(unknown).toMatchObject({ code: 1, stdout: '', stderr: [{ error: 'not_found' }] });
    // Its own name, in another case, is no conflict.
    expect(ownName.json).toMatchObject({ name: 'RENAMED' });
  });

  test('export writes every record oldest first in the API shape; imported into an empty tenant they are equal field by field; a second import skips them all', async () => {
    const { run, stores, elsewhere } = backend();
    const source = await createTenantWithKey(stores.keys, 'export-source', ROOMY);
    const originals = (await seed(stores.records, source.tenant_id, 24)).sort(byPosition);
    // Not vacuous: updated records, superseded records, and records that are both.
    expect(originals.filter((r) => r.superseded_by !== null && r.version > 1 && r.updated_at !== null).length).toBeGreaterThan(0);
    expect(originals.filter((r) => r.superseded_by === null && r.version === 1).length).toBeGreaterThan(0);

    const exported = await run(['export', '--tenant', source.tenant_id]);
    expect(exported.code).toBe(0);
    expect(exported.stderr).toEqual([{ exported: 23, tenant_id: source.tenant_id }]);
    const lines = exported.stdout.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toEqual(originals.map((r) => JSON.stringify(publicRecord(r))));

    // Into a tenant of a place that holds none of these ids: the same records, the tenant apart.
    const target = elsewhere;
    const into = await target.stores.keys.createTenant({ name: 'import-target', limits: { ...ROOMY, recordQuota: 1 } });
    const imported = await target.run(['import', '--tenant', into.tenant_id], exported.stdout);
    expect(imported).toMatchObject({ code: 0, stderr: [] });
    expect(imported.json).toEqual({ imported: 23, skipped: 0, invalid: 0 });
    const copies = await all(target.stores.records, into.tenant_id);
    expect(copies.map(publicRecord)).toEqual(originals.map(publicRecord));
    for (const original of originals) {
      expect(await target.stores.records.get(into.tenant_id, original.id)).toEqual({ ...original, tenant_id: into.tenant_id });
    }
    // Field by field includes the order of the fields, and of the metadata's keys.
    expect(copies.map((r) => JSON.stringify(publicRecord(r)))).toEqual(lines);
    // An import counts against no quota (this tenant's is 1).
    expect(await target.stores.usage.list(MONTH, into.tenant_id)).toEqual([]);

    const again = await target.run(['import', '--tenant', into.tenant_id], exported.stdout);
    expect(again.json).toEqual({ imported: 0, skipped: 23, invalid: 0 });
    expect(await all(target.stores.records, into.tenant_id)).toHaveLength(23);

    // Into another, empty tenant beside the source, in the same database: ids are each tenant's own, so the
    // copies are the same records field by field, and the source keeps its own.
    const beside = await stores.keys.createTenant({ name: 'import-beside', limits: ROOMY });
    const besideRun = await run(['import', '--tenant', beside.tenant_id], exported.stdout);
    expect(besideRun).toMatchObject({ code: 0, stderr: [] });
    expect(besideRun.json).toEqual({ imported: 23, skipped: 0, invalid: 0 });
    expect((await all(stores.records, beside.tenant_id)).map((r) => JSON.stringify(publicRecord(r)))).toEqual(lines);
    expect((await all(stores.records, source.tenant_id)).map(publicRecord)).toEqual(originals.map(publicRecord));
    const besideAgain = await run(['import', '--tenant', beside.tenant_id], exported.stdout);
    expect(besideAgain.json).toEqual({ imported: 0, skipped: 23, invalid: 0 });
  });

  test('tenant delete without --confirm changes nothing and says what it would erase; with it the tenant, its keys and records go, another tenant stays', async () => {
    const { run, stores } = backend();
    const doomed = await createTenantWithKey(stores.keys, 'doomed', ROOMY);
    const secondKey = await stores.keys.createKey(doomed.tenant_id, { keyId: 'key_00000000000000aa', keyHash: hashApiKey('mem_second') });
    const kept = await createTenantWithKey(stores.keys, 'kept', ROOMY);
    await seed(stores.records, doomed.tenant_id, 6, 'doomed');
    const keptRecords = await seed(stores.records, kept.tenant_id, 4, 'kept');

    const refused = await run(['tenant', 'delete', '--tenant', doomed.tenant_id]);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toEqual([
      {
        error: 'confirmation_required',
        message: expect.stringContaining('run the same command with --confirm'),
        tenant_id: doomed.tenant_id,
        name: 'doomed',
        records: 5,
        api_keys: 2,
      },
    ]);
    expect(await all(stores.records, doomed.tenant_id)).toHaveLength(5);
    expect((await stores.keys.listKeys(doomed.tenant_id)).map((k) => k.status)).toEqual(['active', 'active']);

    const deleted = await run(['tenant', 'delete', '--tenant', doomed.tenant_id, '--confirm']);
    expect(deleted.code).toBe(0);
    expect(deleted.json).toEqual({
      tenant_id: doomed.tenant_id,
      name: 'doomed',
      removed: {
        records: 5,
        idempotency_keys: 0,
        api_keys: 2,
        ...(backend().name === 'sqlite' ? { classification_jobs: expect.any(Number), search_index_rows: expect.any(Number) } : {}),
      },
      search_index: expect.any(String),
      kept: expect.stringContaining('usage counters'),
    });
    expect(await stores.keys.getTenant(doomed.tenant_id)).toBeNull();
    expect(await stores.keys.findByHash(hashApiKey(doomed.api_key))).toBeNull();
    expect(await stores.keys.findByHash(hashApiKey('mem_second'))).toBeNull();
    expect(secondKey.tenant_id).toBe(doomed.tenant_id);
    expect(await all(stores.records, doomed.tenant_id)).toEqual([]);
    // Its usage stays, for billing, and usage --tenant shows it as the delete's answer says.
    expect(await stores.usage.list(MONTH, doomed.tenant_id)).toEqual([expect.objectContaining({ records: 6 })]);
    const usage = await run(['usage', '--tenant', doomed.tenant_id, '--month', MONTH]);
    expect(usage).toMatchObject({ code: 0, json: [expect.objectContaining({ tenant_id: doomed.tenant_id, month: MONTH, records: 6 })] });

    expect(await stores.keys.findByHash(hashApiKey(kept.api_key))).toMatchObject({ tenant: { tenant_id: kept.tenant_id } });
    expect((await all(stores.records, kept.tenant_id)).map(publicRecord)).toEqual(keptRecords.sort(byPosition).map(publicRecord));

    const [again, update] = await Promise.all([
      run(['tenant', 'delete', '--tenant', doomed.tenant_id, '--confirm']),
      run(['tenant', 'update', '--tenant', doomed.tenant_id, '--rate', '1']),
    ]);
    expect(again).toMatchObject({ code: 1, stderr: [{ error: 'not_found' }] });
    expect(update).toMatchObject({ code: 1, stderr: [{ error: 'not_found' }] });
  });
}

test('a malformed data command exits 2 with a usage error that names the problem, before it opens anything', async () => {
  const cases: [string[], RegExp][] = [
    [['tenant', 'update', '--rate', '2'], /--tenant <tenant_id> is required/],
    [['tenant', 'update', '--tenant', 'x', '--burst', '0'], /--burst must be a positive integer/],
    [['tenant', 'update', '--tenant', 'x', '--name', ' '], /--name must not be blank/],
    [['tenant', 'delete', '--tenant', 'x', '--name', 'y'], /tenant delete does not take --name/],
    [['tenant', 'delete', '--confirm'], /--tenant <tenant_id> is required/],
    [['export', '--tenant', 'x', '--file', 'f'], /export does not take --file/],
    [['import', '--tenant', 'x', '--file', ''], /--file must name a file/],
    [['import', 'extra', '--tenant', 'x'], /import takes no arguments/],
  ];
  // A data directory that does not exist: a usage error comes first, so nothing is looked for.
  const base = tempDir('memory-admin-usage-');
  const env = { MEMORY_DATA_DIR: join(base, 'missing') };
  for (const [args, message] of cases) {
    expect({ args, ...(await runInProcess(args, env)) }).toEqual({ args, code: 2, stdout: '', json: undefined, stderr: [{ error: 'usage', message: expect.stringMatching(message) }] });
  }
  // import without --file reads stdin, unless stdin is a terminal (an operator who forgot the pipe).
  const terminal = Object.assign(Readable.from([]), { isTTY: true });
  const error = await adminCommand(['import', '--tenant', 'x'], env, undefined, { stdin: terminal, stdout: new PassThrough(), stderr: new PassThrough() }).catch((e) => e);
  expect(error).toMatchObject({ code: 'usage', exitCode: 2, message: expect.stringContaining('stdin is a terminal') });
  expect(existsSync(env.MEMORY_DATA_DIR)).toBe(false);
  removeDir(base);
});

describe('on SQLite, the CLI as a process', () => {
  let dir: string;
  let other: string;
  let sqlite: ReturnType<typeof openSqliteAdapters>;
  let elsewhere: ReturnType<typeof openSqliteAdapters>;
  const env = () => ({ MEMORY_DATA_DIR: dir });

  beforeAll(() => {
    dir = tempDir('memory-admin-data-');
    other = tempDir('memory-admin-data-');
    sqlite = openSqliteAdapters(join(dir, 'memory.db'));
    elsewhere = openSqliteAdapters(join(other, 'memory.db'));
  });
  afterAll(() => {
    killAll();
    sqlite.close();
    elsewhere.close();
    removeDir(dir);
    removeDir(other);
  });

  dataCommands(() => ({
    name: 'sqlite',
    run: (args, stdin) => runProcess(args, env(), stdin),
    stores: sqlite,
    elsewhere: { run: (args, stdin) => runProcess(args, { MEMORY_DATA_DIR: other }, stdin), stores: elsewhere },
  }));

  test('import reports every line that is not a record with its number, imports the others, and exits 1', async () => {
    const tenant = await sqlite.keys.createTenant({ name: 'bad-lines', limits: ROOMY });
    const ms = Date.UTC(2024, 5, 1);
    const good = (i: number) => ({
      id: uuidv7({ msecs: ms + i }),
      agent_id: 'bot',
      type: 'fact',
      title: `good ${i}`,
      body: 'b',
      client: null,
      created_at: new Date(ms + i).toISOString(),
      metadata: null,
      classification: null,
    });
    const file = join(dir, 'bad.ndjson');
    writeFileSync(
      file,
      Buffer.concat([
        Buffer.from(
          [
            JSON.stringify(good(1)),
            '{"id": "truncated',
            JSON.stringify({ ...good(2), tenant_id: tenant.tenant_id }),
            '',
            JSON.stringify({ ...good(3), created_at: new Date(ms + 4).toISOString() }),
            JSON.stringify(good(5)),
          ].join('\n') + '\n',
        ),
        Buffer.from([0x7b, 0xff, 0x7d, 0x0a]),
        Buffer.from(`${JSON.stringify(good(6))}\r\n`),
      ]),
    );
    const result = await runProcess(['import', '--tenant', tenant.tenant_id, '--file', file], env());
    expect(result.code).toBe(1);
    expect(result.json).toEqual({ imported: 3, skipped: 0, invalid: 4 });
    expect(result.stderr).toEqual([
      { error: 'invalid_line', line: 2, message: expect.stringMatching(/^not JSON/) },
      { error: 'invalid_line', line: 3, message: expect.stringContaining('tenant_id') },
      { error: 'invalid_line', line: 5, message: expect.stringContaining('the first 48 bits of a record id are the millisecond of its created_at') },
      { error: 'invalid_line', line: 7, message: 'not UTF-8' },
      { error: 'invalid_lines', message: expect.stringContaining('4 lines of'), invalid: 4 },
    ]);
    expect((await all(sqlite.records, tenant.tenant_id)).map((r) => r.title)).toEqual(['good 1', 'good 5', 'good 6']);

    const [missing, notATenant] = await Promise.all([
      runProcess(['import', '--tenant', tenant.tenant_id, '--file', join(dir, 'nope.ndjson')], env()),
      runProcess(['export', '--tenant', 'no-such-tenant'], env()),
    ]);
    expect(missing).toMatchObject({ code: 1, stdout: '', stderr: [{ error: 'no_file', path: join(dir, 'nope.ndjson') }] });
    expect(notATenant).toMatchObject({ code: 1, stdout: '', stderr: [{ error: 'not_found' }] });
  });

  test("beside a running service: a deleted tenant's key answers 401 at once, and another tenant's searches are untouched", async () => {
    let service: TestService | undefined;
    try {
      service = await startTestService({ MEMORY_DATA_DIR: dir });
      const doomed = await createTenantWithKey(sqlite.keys, 'doomed-live', ROOMY);
      const kept = await createTenantWithKey(sqlite.keys, 'kept-live', ROOMY);
      const doomedApi = new Client(service.url, doomed.api_key);
      const keptApi = new Client(service.url, kept.api_key);
      expect((await doomedApi.remember({ agent_id: 'a', type: 'fact', title: 'zebra crossing', body: 'b' })).status).toBe(201);
      expect((await keptApi.remember({ agent_id: 'a', type: 'fact', title: 'zebra stripes', body: 'b' })).status).toBe(201);
      expect((await doomedApi.recall({ q: 'zebra' })).body).toHaveLength(1);

      const deleted = await runProcess(['tenant', 'delete', '--tenant', doomed.tenant_id, '--confirm'], env());
      expect(deleted.json).toMatchObject({ removed: { records: 1, api_keys: 1 } });
      // The CLI waited out the service's cache of authorizations (MEMORY_AUTH_CACHE_SECONDS) before erasing.
      expect(deleted.stderr).toEqual([{ progress: expect.stringContaining('waiting 2 s') }]);
      expect((await doomedApi.recall({ q: 'zebra' })).status).toBe(401);
      expect((await doomedApi.remember({ agent_id: 'a', type: 'fact', title: 'late', body: 'b' })).status).toBe(401);
      const hits = await keptApi.recall({ q: 'zebra' });
      expect(hits.status).toBe(200);
      expect(hits.body.map((h: any) => h.title)).toEqual(['zebra stripes']);
    } finally {
      await service?.stop();
    }
  });
});

describeWithDynamoDb('on DynamoDB Local, the CLI in process', (endpoint) => {
  let tables: TestTables;
  let otherTables: TestTables;
  let dir: string;
  const envOf = (t: TestTables): Record<string, string> => ({
    MEMORY_BACKEND: 'dynamodb',
    DYNAMODB_ENDPOINT: endpoint,
    MEMORY_RECORDS_TABLE: t.names.records,
    MEMORY_TENANTS_TABLE: t.names.tenants,
    MEMORY_USAGE_TABLE: t.names.usage,
    MEMORY_IDEMPOTENCY_TABLE: t.names.idempotency,
    MEMORY_DATA_DIR: dir,
    // No service runs here, so no cached authorization to wait for.
    MEMORY_AUTH_CACHE_SECONDS: '0',
  });

  beforeAll(async () => {
    dir = tempDir('memory-admin-data-');
    [tables, otherTables] = await Promise.all([createTestTables(endpoint), createTestTables(endpoint)]);
  });
  afterAll(async () => {
    await Promise.all([tables.drop(), otherTables.drop()]);
    removeDir(dir);
  });

  dataCommands(() => ({
    name: 'dynamodb',
    run: (args, stdin) => runInProcess(args, envOf(tables), stdin),
    stores: dynamoDbAdapters(tables.client, tables.names),
    elsewhere: { run: (args, stdin) => runInProcess(args, envOf(otherTables), stdin), stores: dynamoDbAdapters(otherTables.client, otherTables.names) },
  }));
});
