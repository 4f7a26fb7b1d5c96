import Database from 'better-sqlite3';
import { copyFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import { MIGRATIONS, openReadOnlyDatabase } from '../../shared/adapters/local/database.js';
import { generateApiKey, generateKeyId, hashApiKey } from '../../shared/domain/api-key.js';
import { admin, killAll, removeDir, runAdmin, startServer, tempDir, waitFor, waitForMerge, type AdminResult, type ServerProcess } from '../support/child-server.js';
import { indexProblems } from '../support/index-invariants.js';
import { Client } from '../support/local-service.js';

/**
 * `admin backup` and `admin restore` as an operator runs them, child processes beside a real server:
 * a backup taken while writes go on, restored into a fresh directory, holds every record acknowledged
 * before it began (and not one deleted before), each found by its own word, with a search index that is
 * exactly what its records make; and every refusal (a file that exists, the database itself, a directory
 * with a database, a file that is not a backup of this service, the dynamodb backend) says so and changes
 * nothing. test/model/backup.model.test.ts checks the snapshot itself step by step.
 */

const ROOMY = ['--record-quota', '10000000', '--query-quota', '10000000', '--rate', '1000000', '--burst', '1000000'];

let dataDir: string;
/** Where the backups, the restored directories and the bad files go. */
let work: string;
let env: Record<string, string>;
let tenant: { tenant_id: string; api_key: string };
const servers: ServerProcess[] = [];

beforeAll(async () => {
  dataDir = tempDir('memory-backup-');
  work = tempDir('memory-backup-work-');
  env = { MEMORY_DATA_DIR: dataDir };
  tenant = await admin(['--create', 'tenant', 'create', '--name', 'backup', ...ROOMY], env);
  servers.push(await startServer(dataDir, { MEMORY_JOB_POLL_MS: '50' }));
});

afterAll(async () => {
  killAll();
  await Promise.all(servers.map((s) => s.closed));
  removeDir(dataDir);
  removeDir(work);
});

/** Every stderr line of a run, parsed: each must be JSON. */
const stderrLines = (r: AdminResult) => r.stderr.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));

/** The one error line of a failed run, with its exit code and an empty stdout. */
function refusal(r: AdminResult) {
  expect(r.stdout).toBe('');
  return { code: r.code, ...stderrLines(r).at(-1) };
}

let tokens = 0;
const token = () => `bkword${tokens++}q`;

test('a backup taken while writes go on, restored into a fresh directory, holds every record acknowledged before it began, each found by its word, with an index that counts its records', async () => {
  const api = new Client(servers[0]!.url, tenant.api_key);
  const live = new Map<string, string>(); // word -> id, acknowledged and not deleted
  const gone = new Map<string, string>(); // word -> id, whose delete was acknowledged
  const replaced = new Map<string, string>(); // old word -> id, whose update to a new word was acknowledged
  const written = new Set<string>(); // every id ever acknowledged
  let phase: 'before' | 'during' | 'after' = 'before';
  let duringBackup = 0;

  const write = async (agent: string) => {
    const word = token();
    const res = await api.remember({ agent_id: agent, type: 'fact', title: `Note ${word}`, body: `The ${word} release notes mention the deploy.` });
    expect(res.status).toBe(201);
    written.add(res.body.id);
    return { word, id: res.body.id as string };
  };
  const writer = async () => {
    while (phase !== 'after') {
      const during = phase === 'during';
      const { word, id } = await write('writer');
      live.set(word, id);
      if (during && phase === 'during') duringBackup++;
    }
  };
  // Before the backup only: a record deleted, and one given a new word, each acknowledged before it began.
  const changer = async () => {
    while (phase === 'before') {
      const doomed = await write('changer');
      expect((await api.request('DELETE', `/api/v1/record/${doomed.id}`)).status).toBe(200);
      gone.set(doomed.word, doomed.id);
      const changed = await write('changer');
      const word = token();
      expect((await api.update(changed.id, { title: `Corrected ${word}`, body: `The ${word} notes, corrected.` })).status).toBe(200);
      replaced.set(changed.word, changed.id);
      live.set(word, changed.id);
    }
  };
  const workers = [writer(), writer(), writer(), changer()];
  await waitFor(() => live.size >= 400 && gone.size >= 20, 60_000, 'the first writes');
  // Stop the changes first, so that none is in flight when the backup begins.
  phase = 'during';
  await workers[3];
  const before = new Map(live);
  const goneBefore = new Map(gone);
  const replacedBefore = new Map(replaced);

  const file = join(work, 'live.db');
  const backup = await runAdmin(['backup', '--to', file], env);
  phase = 'after';
  await Promise.all(workers);
  expect(backup.code).toBe(0);
  for (const line of stderrLines(backup)) expect(Object.keys(line)).toEqual(['progress']);
  // The writes went on while the backup ran, and the server answered each.
  expect(duringBackup).toBeGreaterThan(0);
  expect(backup.json).toEqual({
    file,
    bytes: statSync(file).size,
    records: expect.any(Number),
    tenants: 1,
    schema_version: MIGRATIONS.length,
    taken_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
  });
  expect(backup.json.records).toBeGreaterThanOrEqual(before.size);
  expect(readdirSync(work)).toEqual(['live.db']);

  const restoredDir = join(work, 'restored', 'data');
  const restored = await runAdmin(['restore', '--from', file], { MEMORY_DATA_DIR: restoredDir });
  expect(restored.code).toBe(0);
  expect(restored.json).toEqual({
    restored: join(restoredDir, 'memory.db'),
    from: file,
    bytes: backup.json.bytes,
    records: backup.json.records,
    tenants: 1,
    schema_version: MIGRATIONS.length,
  });
  expect(readdirSync(restoredDir)).toEqual(['memory.db']);

  // The restored file, before any server opens it: every record acknowledged before the backup began, none
  // deleted before it, nothing never written, and an index (with its tail) exactly what the records make.
  const db = openReadOnlyDatabase(join(restoredDir, 'memory.db'));
  try {
    const ids = new Set(db.prepare('SELECT id FROM records').pluck().all() as string[]);
    expect(ids.size).toBe(backup.json.records);
    expect([...before.values()].filter((id) => !ids.has(id))).toEqual([]);
    expect([...goneBefore.values()].filter((id) => ids.has(id))).toEqual([]);
    expect([...ids].filter((id) => !written.has(id))).toEqual([]);
    expect(indexProblems(db)).toEqual([]);
  } finally {
    db.close();
  }

  const server = await startServer(restoredDir, { MEMORY_JOB_POLL_MS: '50' });
  servers.push(server);
  const restoredApi = new Client(server.url, tenant.api_key);
  const missing: string[] = [];
  for (const [word, id] of before) {
    if ((await restoredApi.request('GET', `/api/v1/record/${id}`)).status !== 200) missing.push(`GET ${word}`);
    const hits = (await restoredApi.recall({ q: word })).body.map((r: { id: string }) => r.id);
    if (JSON.stringify(hits) !== JSON.stringify([id])) missing.push(`search ${word}: ${JSON.stringify(hits)}`);
  }
  expect(missing).toEqual([]);
  for (const [word, id] of goneBefore) {
    expect((await restoredApi.request('GET', `/api/v1/record/${id}`)).status).toBe(404);
    expect((await restoredApi.recall({ q: word })).body).toEqual([]);
  }
  // An update acknowledged before the backup: its new word finds it (checked above), its old word nothing.
  for (const [word] of replacedBefore) expect((await restoredApi.recall({ q: word })).body).toEqual([]);

  // Once the restored server has merged its tail, the index counts exactly the records, and is still exact.
  const check = openReadOnlyDatabase(join(restoredDir, 'memory.db'));
  try {
    await waitForMerge(check, 30_000, 'the merge of the restored tail');
    const docs = check.prepare('SELECT docs FROM search_tenants WHERE tenant = ?').pluck().get(tenant.tenant_id);
    expect(docs).toBe(backup.json.records);
    expect(check.prepare('SELECT count(*) FROM records WHERE tenant_id = ?').pluck().get(tenant.tenant_id)).toBe(backup.json.records);
    expect(indexProblems(check)).toEqual([]);
  } finally {
    check.close();
  }
  // The restored database takes writes under the same key.
  expect((await restoredApi.remember({ agent_id: 'after', type: 'fact', title: 'After the restore', body: 'A new note.' })).status).toBe(201);
  await server.stop('SIGTERM');
}, 180_000);

test('backup refuses a file that exists unless --force, a directory that does not exist, and the database itself; --force replaces a file whole', async () => {
  const existing = join(work, 'existing.db');
  writeFileSync(existing, 'an older file');
  const [kept, noDir, itself, itselfWal] = await Promise.all([
    runAdmin(['backup', '--to', existing], env),
    runAdmin(['backup', '--to', join(work, 'no-such-dir', 'b.db')], env),
    runAdmin(['backup', '--to', join(dataDir, 'memory.db'), '--force'], env),
    runAdmin(['backup', '--to', join(dataDir, '..', dataDir.split('/').at(-1)!, 'memory.db-wal'), '--force'], env),
  ]);
  expect(refusal(kept)).toEqual({ code: 1, error: 'file_exists', message: expect.stringContaining('--force'), path: existing });
  expect(readFileSync(existing, 'utf8')).toBe('an older file');
  expect(refusal(noDir)).toEqual({ code: 1, error: 'invalid_target', message: expect.stringContaining('does not exist'), path: join(work, 'no-such-dir', 'b.db') });
  expect(refusal(itself)).toMatchObject({ code: 1, error: 'invalid_target', message: expect.stringContaining('the database itself') });
  expect(refusal(itselfWal)).toMatchObject({ code: 1, error: 'invalid_target', message: expect.stringContaining('the database itself') });
  // The server's database is untouched: it answers as before.
  expect((await new Client(servers[0]!.url, tenant.api_key).recall({ q: 'release' })).status).toBe(200);

  const replaced = await runAdmin(['backup', '--to', existing, '--force'], env);
  expect(replaced.code).toBe(0);
  expect(replaced.json.bytes).toBe(statSync(existing).size);
  const copy = new Database(existing, { readonly: true, fileMustExist: true });
  try {
    expect(copy.prepare('PRAGMA integrity_check').pluck().get()).toBe('ok');
    expect(copy.prepare('SELECT count(*) FROM records').pluck().get()).toBe(replaced.json.records);
    expect(copy.pragma('journal_mode', { simple: true })).toBe('delete');
  } finally {
    copy.close();
  }
  // No temporary file is left beside it.
  expect(readdirSync(work).filter((f) => f.includes('.partial'))).toEqual([]);
}, 60_000);

test('restore refuses a directory that holds a database, a missing file, and a file that is not a whole backup of this service, changing nothing', async () => {
  const good = join(work, 'good.db');
  expect((await runAdmin(['backup', '--to', good], env)).code).toBe(0);

  const text = join(work, 'notes.txt');
  writeFileSync(text, 'these are not the records you are looking for\n'.repeat(100));
  const foreign = join(work, 'foreign.db');
  const other = new Database(foreign);
  other.exec('CREATE TABLE things (x)');
  other.close();
  const newer = join(work, 'newer.db');
  copyFileSync(good, newer);
  const future = new Database(newer);
  future.pragma(`user_version = ${MIGRATIONS.length + 1}`);
  future.close();
  const damaged = join(work, 'damaged.db');
  const bytes = readFileSync(good);
  // Pages past the first (which holds the schema) overwritten: SQLite opens the file, its integrity check does not pass it.
  const pageSize = bytes.readUInt16BE(16);
  bytes.fill(0xa5, pageSize * 3, pageSize * 8);
  writeFileSync(damaged, bytes);

  const into = (name: string) => ({ MEMORY_DATA_DIR: join(work, 'into', name) });
  const [occupied, missing, notSqlite, notOurs, tooNew, corrupt] = await Promise.all([
    runAdmin(['restore', '--from', good], env),
    runAdmin(['restore', '--from', join(work, 'nothing.db')], into('missing')),
    runAdmin(['restore', '--from', text], into('text')),
    runAdmin(['restore', '--from', foreign], into('foreign')),
    runAdmin(['restore', '--from', newer], into('newer')),
    runAdmin(['restore', '--from', damaged], into('damaged')),
  ]);
  expect(refusal(occupied)).toEqual({
    code: 1,
    error: 'database_exists',
    message: expect.stringMatching(/holds a database already[\s\S]*Stop the server/),
    path: dataDir,
    files: expect.arrayContaining(['memory.db']),
  });
  expect(refusal(missing)).toEqual({ code: 1, error: 'no_file', message: expect.stringContaining('no such file'), path: join(work, 'nothing.db') });
  expect(refusal(notSqlite)).toEqual({ code: 1, error: 'invalid_backup', message: expect.stringContaining('not an SQLite database'), path: text, problem: 'not_sqlite' });
  expect(refusal(notOurs)).toEqual({ code: 1, error: 'invalid_backup', message: expect.stringContaining('not one of this service'), path: foreign, problem: 'not_this_service' });
  expect(refusal(tooNew)).toEqual({ code: 1, error: 'invalid_backup', message: expect.stringContaining(`schema version is ${MIGRATIONS.length + 1}`), path: newer, problem: 'newer_schema' });
  expect(refusal(corrupt)).toEqual({ code: 1, error: 'invalid_backup', message: expect.stringContaining('it is damaged'), path: damaged, problem: 'corrupt' });
  // Nothing was made: no database, no temporary copy; a refused file is as it was.
  for (const name of ['missing', 'text']) expect(existsSync(join(work, 'into', name))).toBe(false);
  for (const name of ['foreign', 'newer', 'damaged']) expect(readdirSync(join(work, 'into', name))).toEqual([]);
  expect(readFileSync(damaged).equals(bytes)).toBe(true);
  // The server's database is untouched.
  expect((await new Client(servers[0]!.url, tenant.api_key).recall({ q: 'release' })).status).toBe(200);
}, 60_000);

test('backup and restore work on SQLite only, take no --create, need their file, and back up only a database that exists', async () => {
  const nowhere = join(work, 'nowhere');
  const [dynamo, dynamoEnv, noTo, create, emptyTo, noDatabase] = await Promise.all([
    runAdmin(['--backend', 'dynamodb', 'backup', '--to', join(work, 'd.db')], env),
    runAdmin(['restore', '--from', join(work, 'd.db')], { MEMORY_BACKEND: 'dynamodb', MEMORY_DATA_DIR: nowhere }),
    runAdmin(['backup'], env),
    runAdmin(['restore', '--create', '--from', join(work, 'd.db')], { MEMORY_DATA_DIR: nowhere }),
    runAdmin(['backup', '--to', ''], env),
    runAdmin(['backup', '--to', join(work, 'd.db')], { MEMORY_DATA_DIR: nowhere }),
  ]);
  for (const r of [dynamo, dynamoEnv]) {
    expect(refusal(r)).toEqual({ code: 1, error: 'unsupported_backend', message: expect.stringMatching(/point-in-time recovery[\s\S]*on-demand backups/) });
  }
  expect(refusal(noTo)).toEqual({ code: 2, error: 'usage', message: '--to <file> is required' });
  expect(refusal(create)).toEqual({ code: 2, error: 'usage', message: 'restore does not take --create' });
  expect(refusal(emptyTo)).toEqual({ code: 2, error: 'usage', message: '--to must name a file' });
  expect(refusal(noDatabase)).toEqual({ code: 1, error: 'no_database', message: expect.stringContaining(nowhere), path: join(nowhere, 'memory.db') });
  expect(existsSync(nowhere)).toBe(false);
  expect(existsSync(join(work, 'd.db'))).toBe(false);
}, 60_000);

test('a backup of an older version is restored as it is, and the server migrates it at start: its records are found', async () => {
  // A version-2 database (before the search engine), with a tenant, a key and records, as that version wrote it.
  const old = join(work, 'version-2.db');
  const db = new Database(old);
  for (const sql of MIGRATIONS.slice(0, 2)) db.exec(sql);
  db.pragma('user_version = 2');
  const tenantId = uuidv7();
  const apiKey = generateApiKey();
  const at = new Date(Date.UTC(2026, 0, 1)).toISOString();
  db.prepare('INSERT INTO tenants (id, name, record_quota, query_quota, rate, burst, created_at) VALUES (?, ?, 1000, 1000, 100, 100, ?)').run(tenantId, 'old', at);
  db.prepare("INSERT INTO api_keys (id, tenant_id, key_hash, rate, burst, status, created_at) VALUES (?, ?, ?, NULL, NULL, 'active', ?)").run(generateKeyId(), tenantId, hashApiKey(apiKey), at);
  const ids: string[] = [];
  const insert = db.prepare(`INSERT INTO records (id, tenant_id, agent_id, type, title, body, client, metadata, created_at)
                             VALUES (?, ?, 'agent', 'fact', ?, ?, NULL, NULL, ?)`);
  for (let i = 0; i < 30; i++) {
    const created = Date.UTC(2026, 0, 1, 0, 0, i);
    ids.push(uuidv7({ msecs: created }));
    insert.run(ids[i], tenantId, `Old note ${i}`, `oldword${i}z from before the upgrade`, new Date(created).toISOString());
  }
  db.close();

  const restoredDir = join(work, 'restored-old');
  const restored = await runAdmin(['restore', '--from', old], { MEMORY_DATA_DIR: restoredDir });
  expect(restored.code).toBe(0);
  expect(restored.json).toMatchObject({ records: 30, tenants: 1, schema_version: 2 });
  expect(stderrLines(restored)).toContainEqual({ progress: expect.stringContaining(`schema version is 2; the server migrates it to ${MIGRATIONS.length}`) });

  const server = await startServer(restoredDir);
  servers.push(server);
  const api = new Client(server.url, apiKey);
  for (const i of [0, 17, 29]) {
    expect((await api.recall({ q: `oldword${i}z` })).body.map((r: { id: string }) => r.id)).toEqual([ids[i]]);
    expect((await api.request('GET', `/api/v1/record/${ids[i]}`)).body).toMatchObject({ id: ids[i], title: `Old note ${i}`, version: 1 });
  }
  await server.stop('SIGTERM');
  const migrated = openReadOnlyDatabase(join(restoredDir, 'memory.db'));
  try {
    expect(migrated.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    expect(indexProblems(migrated)).toEqual([]);
  } finally {
    migrated.close();
  }
}, 60_000);
