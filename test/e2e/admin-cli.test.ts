import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client, aRecord } from '../support/local-service.js';
import { admin, killAll, removeDir, runAdmin, startServer, tempDir, type ServerProcess } from '../support/child-server.js';

/**
 * The admin CLI (`npm run admin`) as a real child process: every command prints JSON on stdout, errors
 * print {"error","message"} on stderr with exit code 1 (2 for a malformed command). It shares the data
 * directory with a running server, and never makes a new database unless asked to (--create).
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const KEY_FIELDS = ['agent_id', 'burst', 'created_at', 'expires_at', 'key_id', 'last_used_on', 'rate', 'revoked_at', 'scopes', 'status', 'tenant_id'];

let dir: string;
let env: Record<string, string>;
/** Every API key the CLI printed, to look for in the database files. */
const issued: string[] = [];
let server: ServerProcess | undefined;

beforeAll(() => {
  dir = tempDir('memory-admin-');
  env = { MEMORY_DATA_DIR: dir };
});

afterAll(async () => {
  killAll();
  if (server) await server.closed;
  removeDir(dir);
});

async function createTenant(args: string[], extraEnv: Record<string, string> = {}) {
  const created = await admin(['tenant', 'create', ...args], { ...env, ...extraEnv });
  issued.push(created.api_key);
  return created as { tenant_id: string; api_key: string; key_id: string };
}

/** The bytes of the database and its WAL and shared-memory files, as they are on disk now. */
function databaseBytes(): Buffer {
  const files = ['memory.db', 'memory.db-wal', 'memory.db-shm'].map((f) => join(dir, f)).filter((f) => existsSync(f));
  expect(files).toContain(join(dir, 'memory.db'));
  return Buffer.concat(files.map((f) => readFileSync(f)));
}

/** No issued key occurs in the database files, while the hash of each does (so the right bytes were read). */
function expectOnlyHashesStored(): void {
  const bytes = databaseBytes();
  expect(issued.length).toBeGreaterThan(0);
  for (const key of issued) {
    expect(bytes.includes(Buffer.from(key))).toBe(false);
    // The secret part alone, in case a prefix-stripped or re-encoded form were stored.
    expect(bytes.includes(Buffer.from(key.slice('mem_'.length)))).toBe(false);
    expect(bytes.includes(Buffer.from(createHash('sha256').update(key).digest('hex')))).toBe(true);
  }
}

let acme: { tenant_id: string; api_key: string; key_id: string };
let second: { tenant_id: string; api_key: string; key_id: string };

test('where there is no database every command exits 1 with no_database and creates nothing; --create makes one', async () => {
  const elsewhere = join(dir, 'not-the-server-dir');
  const commands = [['tenant', 'list'], ['tenant', 'create', '--name', 'x'], ['key', 'revoke', 'key_0123456789abcdef'], ['usage']];
  const results = await Promise.all(
    commands.flatMap((args) => [runAdmin(args, { MEMORY_DATA_DIR: elsewhere }), runAdmin(args, env)]),
  );
  for (const result of results) {
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: '' });
    expect(result.error).toEqual({ error: 'no_database', message: expect.stringContaining('--create'), path: expect.stringMatching(/memory\.db$/) });
  }
  expect(results[0]!.error.message).toContain(elsewhere);
  expect(existsSync(elsewhere)).toBe(false);
  expect(readdirSync(dir)).toEqual([]);

  expect(await admin(['--create', 'tenant', 'list'], env)).toEqual([]);
  expect(existsSync(join(dir, 'memory.db'))).toBe(true);
});

test('tenant create prints the tenant id, the key once and its key id; tenant list shows the limits', async () => {
  acme = await createTenant(['--name', 'acme', '--record-quota', '5', '--query-quota', '7', '--rate', '3', '--burst', '4']);
  expect(Object.keys(acme).sort()).toEqual(['api_key', 'key_id', 'tenant_id']);
  expect(acme.tenant_id).toMatch(UUID);
  expect(acme.api_key).toMatch(/^mem_\S{20,}$/);
  expect(typeof acme.key_id).toBe('string');

  const tenants: any[] = await admin(['tenant', 'list'], env);
  expect(tenants).toEqual([
    expect.objectContaining({ tenant_id: acme.tenant_id, name: 'acme', record_quota: 5, query_quota: 7, rate: 3, burst: 4 }),
  ]);
  expect(JSON.stringify(tenants)).not.toContain(acme.api_key);
});

test('limits that are not given come from MEMORY_DEFAULT_* and otherwise from the built-in defaults', async () => {
  const fromEnv = {
    MEMORY_DEFAULT_RECORD_QUOTA: '11',
    MEMORY_DEFAULT_QUERY_QUOTA: '12',
    MEMORY_DEFAULT_RATE: '1.5',
    MEMORY_DEFAULT_BURST: '14',
  };
  await Promise.all([
    createTenant(['--name', 'from-env'], fromEnv),
    createTenant(['--name', 'partly-env', '--burst', '9'], fromEnv),
    createTenant(['--name', 'built-in']),
  ]);
  const tenants: any[] = await admin(['tenant', 'list'], env);
  const byName = (name: string) => tenants.find((t) => t.name === name);
  expect(byName('from-env')).toMatchObject({ record_quota: 11, query_quota: 12, rate: 1.5, burst: 14 });
  expect(byName('partly-env')).toMatchObject({ record_quota: 11, query_quota: 12, rate: 1.5, burst: 9 });
  expect(byName('built-in')).toMatchObject({ record_quota: 100_000, query_quota: 1_000_000, rate: 20, burst: 40 });
});

test('key create issues another key; key list shows both as active and never a key or a hash', async () => {
  second = await admin(['key', 'create', '--tenant', acme.tenant_id], env);
  issued.push(second.api_key);
  expect(Object.keys(second).sort()).toEqual(['api_key', 'key_id', 'tenant_id']);
  expect(second.tenant_id).toBe(acme.tenant_id);
  expect(second.api_key).toMatch(/^mem_/);
  expect(second.api_key).not.toBe(acme.api_key);
  expect(second.key_id).not.toBe(acme.key_id);

  const listed = await runAdmin(['key', 'list', '--tenant', acme.tenant_id], env);
  expect(listed.code).toBe(0);
  const keys: any[] = listed.json;
  expect(keys.map((k) => k.key_id).sort()).toEqual([acme.key_id, second.key_id].sort());
  for (const key of keys) {
    expect(Object.keys(key).sort()).toEqual(KEY_FIELDS);
    expect(key).toMatchObject({ tenant_id: acme.tenant_id, status: 'active', revoked_at: null });
  }
  expect(listed.stdout).not.toMatch(/api_key|hash|mem_/);
  for (const key of [acme.api_key, second.api_key]) {
    expect(listed.stdout).not.toContain(createHash('sha256').update(key).digest('hex'));
  }
});

test('key create --scope, --agent and --expires-in make a key that can do less and ends; key list shows both, and a bad value is a usage error', async () => {
  const scoped = await admin(['tenant', 'create', '--name', 'scoped'], env);
  const limited = await admin(['key', 'create', '--tenant', scoped.tenant_id, '--scope', 'read,delete', '--agent', 'dashboard', '--expires-in', '30d'], env);
  const listed = (await runAdmin(['key', 'list', '--tenant', scoped.tenant_id], env)).json as any[];
  const shown = listed.find((k) => k.key_id === limited.key_id);
  expect(shown.scopes).toEqual(['read', 'delete']);
  expect(shown.agent_id).toBe('dashboard');
  expect(Date.parse(shown.expires_at) - Date.now()).toBeGreaterThan(29 * 86_400_000);
  expect(listed.find((k) => k.key_id === scoped.key_id)).toMatchObject({ scopes: ['read', 'write', 'delete'], expires_at: null, agent_id: null });
  // Once its end has passed (moved back here, as the CLI takes no end in the past), the key shows as expired.
  expect(shown.status).toBe('active');
  const db = new Database(join(dir, 'memory.db'));
  db.prepare('UPDATE api_keys SET expires_at = ? WHERE id = ?').run('2001-01-01T00:00:00.000Z', limited.key_id);
  db.close();
  const later = (await runAdmin(['key', 'list', '--tenant', scoped.tenant_id], env)).json as any[];
  expect(later.find((k) => k.key_id === limited.key_id)).toMatchObject({ status: 'expired', expires_at: '2001-01-01T00:00:00.000Z' });
  expect(later.find((k) => k.key_id === scoped.key_id)!.status).toBe('active');
  for (const args of [['--agent', ' '], ['--scope', 'admin'], ['--expires-in', '3 weeks'], ['--expires-at', '2001-01-01'], ['--expires-in', '1d', '--expires-at', '2099-01-01']]) {
    const r = await runAdmin(['key', 'create', '--tenant', acme.tenant_id, ...args], env);
    expect({ code: r.code, error: JSON.parse(r.stderr.trim().split('\n').at(-1)!).error }).toEqual({ code: 2, error: 'usage' });
  }
});

test('key revoke takes a key id or the key itself; an unknown key exits 1 with a JSON error', async () => {
  const [byId, byKey, unknownId, unknownKey] = await Promise.all([
    runAdmin(['key', 'revoke', acme.key_id], env),
    runAdmin(['key', 'revoke', second.api_key], env),
    runAdmin(['key', 'revoke', 'key_0123456789abcdef'], env),
    runAdmin(['key', 'revoke', 'mem_not-a-key-that-was-ever-issued'], env),
  ]);
  expect(byId.code).toBe(0);
  expect(byId.json).toMatchObject({ key_id: acme.key_id, tenant_id: acme.tenant_id, status: 'revoked', revoked_at: expect.any(String) });
  expect(byKey.code).toBe(0);
  expect(byKey.json).toMatchObject({ key_id: second.key_id, tenant_id: acme.tenant_id, status: 'revoked', revoked_at: expect.any(String) });
  expect(byKey.stdout).not.toContain(second.api_key);
  for (const unknown of [unknownId, unknownKey]) {
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.error).toEqual({ error: 'not_found', message: expect.any(String) });
  }

  const keys: any[] = await admin(['key', 'list', '--tenant', acme.tenant_id], env);
  expect(keys.map((k) => k.status)).toEqual(['revoked', 'revoked']);
});

test('tenant names are unique whatever their case and surrounding spaces: a taken name exits 1 with name_taken and its tenant', async () => {
  const taken = await runAdmin(['tenant', 'create', '--name', '  ACME '], env);
  expect({ code: taken.code, stdout: taken.stdout }).toEqual({ code: 1, stdout: '' });
  expect(taken.error).toEqual({ error: 'name_taken', message: expect.stringContaining('"acme"'), tenant_id: acme.tenant_id });

  const spaced = await createTenant(['--name', '  Beta Corp  ']);
  const tenants: any[] = await admin(['tenant', 'list'], env);
  expect(tenants.filter((t) => t.name.toLowerCase() === 'acme')).toHaveLength(1);
  expect(tenants.find((t) => t.tenant_id === spaced.tenant_id).name).toBe('Beta Corp');
});

test('every malformed command line exits 2 with a usage error that names the problem, and touches nothing', async () => {
  const before = await admin(['tenant', 'list'], env);
  const cases: [string[], RegExp][] = [
    [['tenant', 'create', '--name', 'neg', '--rate', '-1'], /--rate must be a positive number/],
    [['tenant', 'create', '--name', 'neg', '--burst', '-5'], /--burst must be a positive integer/],
    [['tenant', 'create', '--name', 'neg', '--record-quota', '-1'], /--record-quota must be a non-negative integer/],
    [['tenant', 'create', '--name', 'neg', '--query-quota=1.5'], /--query-quota must be a non-negative integer/],
    [['tenant', 'create', '--name'], /--name/],
    [['tenant', 'create'], /--name <name> is required/],
    [['tenant', 'create', '--name', '\u00a0\u200b'], /--name must not be blank/],
    [['tenant', 'create', '--name', 'n'.repeat(101)], /--name must be at most 100 characters/],
    [['tenant', 'list', 'extra'], /tenant list takes no arguments/],
    [['tenant', 'list', '--rate', '3'], /tenant list does not take --rate/],
    [['key', 'revoke'], /key revoke needs exactly one argument/],
    [['key', 'revoke', 'a', 'b'], /key revoke needs exactly one argument/],
    [['key', 'create'], /--tenant <tenant_id> is required/],
    [['key', 'create', '--tenant', 'x', '--scope', 'read', '--scope', 'write'], /--scope given more than once: give each option once; --scope takes a comma list, e\.g\. --scope read,write/],
    [['usage', '--tenant', 'a', '--month', '2026-01', '--tenant', 'b'], /--tenant given more than once/],
    [['usage', '--name', 'x'], /usage does not take --name/],
    [['tenant', 'update', '--tenant', 'x'], /tenant update needs at least one of --name, --record-quota, --query-quota, --rate, --burst/],
    [['export'], /--tenant <tenant_id> is required/],
    [['-x'], /-x/],
    [['--backend', 'dynamodb', '--create', 'tenant', 'list'], /DynamoDB Local only/],
  ];
  const results = await Promise.all(cases.map(([args]) => runAdmin(args, env)));
  results.forEach((result, i) => {
    expect({ args: cases[i]![0], code: result.code, stdout: result.stdout }).toEqual({ args: cases[i]![0], code: 2, stdout: '' });
    expect(result.error).toEqual({ error: 'usage', message: expect.stringMatching(cases[i]![1]) });
  });
  expect(await admin(['tenant', 'list'], env)).toEqual(before);
});

test('usage prints arrays; malformed commands exit 2 and an unknown tenant exits 1, each with a JSON error', async () => {
  const [all, month, badMonth, unknownCommand, unknownOption, noTenant, missingTenant] = await Promise.all([
    runAdmin(['usage'], env),
    runAdmin(['usage', '--tenant', acme.tenant_id, '--month', '2024-01'], env),
    runAdmin(['usage', '--month', '2024-13'], env),
    runAdmin(['frobnicate'], env),
    runAdmin(['tenant', 'list', '--bogus'], env),
    runAdmin(['key', 'create', '--tenant', 'nope'], env),
    runAdmin(['key', 'list'], env),
  ]);
  expect(all.code).toBe(0);
  expect(Array.isArray(all.json)).toBe(true);
  expect(month.code).toBe(0);
  expect(month.json).toEqual([]);

  for (const malformed of [badMonth, unknownCommand, unknownOption, missingTenant]) {
    expect({ code: malformed.code, stdout: malformed.stdout }).toEqual({ code: 2, stdout: '' });
    expect(malformed.error).toEqual({ error: 'usage', message: expect.any(String) });
  }
  expect(badMonth.error.message).toMatch(/YYYY-MM/);
  expect(noTenant.code).toBe(1);
  expect(noTenant.error).toEqual({ error: 'not_found', message: expect.stringContaining('nope') });
});

test('works beside a running server: a new key writes, usage counts it, and a tenant update and a revoke reach the server at once, its cache of authorizations notwithstanding', async () => {
  server = await startServer(dir);
  const tenant = await createTenant(['--name', 'live', '--rate', '1000', '--burst', '1000']);
  const other = await admin(['key', 'create', '--tenant', tenant.tenant_id], env);
  issued.push(other.api_key);
  const api = new Client(server.url, tenant.api_key);
  const otherApi = new Client(server.url, other.api_key);

  const written = await api.remember(aRecord({ title: 'written beside the admin CLI' }));
  expect(written.status).toBe(201);
  expect(written.body.tenant_id).toBe(tenant.tenant_id);
  expect((await otherApi.recall({ q: 'admin' })).status).toBe(200);

  const usage: any[] = await admin(['usage', '--tenant', tenant.tenant_id], env);
  expect(usage).toEqual([{ tenant_id: tenant.tenant_id, month: new Date().toISOString().slice(0, 7), records: 1, queries: 1 }]);
  const everyone: any[] = await admin(['usage'], env);
  expect(everyone).toContainEqual(expect.objectContaining({ tenant_id: tenant.tenant_id, records: 1 }));

  // While the server runs and holds the database open, the files hold hashes only.
  expectOnlyHashesStored();

  // Both keys' authorizations are in the gateway's cache (MEMORY_AUTH_CACHE_SECONDS, 2 s by default), and
  // each change below is seen by the very next request all the same.
  expect((await api.recall({ q: 'admin' })).status).toBe(200);
  expect(await admin(['tenant', 'update', '--tenant', tenant.tenant_id, '--record-quota', '2'], env)).toMatchObject({ record_quota: 2 });
  expect((await otherApi.remember(aRecord())).status).toBe(201);
  expect((await api.remember(aRecord())).status).toBe(507);

  const revoked = await admin(['key', 'revoke', tenant.api_key], env);
  expect(revoked).toMatchObject({ key_id: tenant.key_id, status: 'revoked' });
  expect((await api.recall({ q: 'admin' })).status).toBe(401);
  expect((await api.remember(aRecord())).status).toBe(401);
  // The tenant's other key still works.
  expect((await otherApi.recall({ q: 'admin' })).status).toBe(200);

  const stopped = await server.stop('SIGTERM');
  expect(stopped.code).toBe(0);
});

test('the database never holds an API key, only its hash', () => {
  expectOnlyHashesStored();
});
