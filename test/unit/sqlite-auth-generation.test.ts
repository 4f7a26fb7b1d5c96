import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../shared/adapters/local/database.js';
import type { Db } from '../../shared/adapters/local/db.js';
import { SqliteKeyStore } from '../../shared/adapters/local/key-store.js';

/**
 * The count the local gateway checks before it reuses a cached authorization (local/gateway.ts): it moves
 * with every change that could make a cached answer wrong, made through the key store or not, and with no
 * other, so that a key's daily mark of use does not empty the cache.
 */

let db: Db;
let keys: SqliteKeyStore;
const LIMITS = { recordQuota: 10, queryQuota: 10, rate: 5, burst: 10 };
beforeEach(() => {
  db = openDatabase(':memory:');
  keys = new SqliteKeyStore(db);
});
afterEach(() => db.close());

async function aKey(n: number) {
  const tenant = await keys.createTenant({ name: `t${n}`, limits: LIMITS });
  const key = await keys.createKey(tenant.tenant_id, { keyId: `key_${n}`, keyHash: `hash_${n}` });
  return { tenant, key };
}

/** Whether `change` moved the count. */
async function moves(change: () => unknown): Promise<boolean> {
  const before = keys.authGeneration();
  await change();
  return keys.authGeneration() !== before;
}

test('a revoke, a tenant update, a tenant delete and any change to a key row but its last day of use move it', async () => {
  const { tenant, key } = await aKey(1);
  const other = await aKey(2);
  expect(await moves(() => keys.markUsed(key, '2026-11-28'))).toBe(false);
  expect(await moves(() => aKey(3))).toBe(false);
  expect(await moves(() => keys.revoke({ keyId: key.key_id }))).toBe(true);
  expect(await moves(() => keys.updateTenant(tenant.tenant_id, { limits: { recordQuota: 1 } }))).toBe(true);
  // Changes made by another process's SQL (the admin CLI, an operator's sqlite3) count the same.
  for (const [column, value] of [['expires_at', '2026-01-01T00:00:00.000Z'], ['scopes', 'read'], ['agent_id', 'a'], ['rate', 1], ['burst', 1], ['status', 'active']] as const) {
    expect(await moves(() => db.prepare(`UPDATE api_keys SET ${column} = ? WHERE id = ?`).run(value, other.key.key_id))).toBe(true);
  }
  expect(await moves(() => keys.deleteTenant(other.tenant.tenant_id))).toBe(true);
  expect(await moves(() => db.prepare('DELETE FROM api_keys').run())).toBe(true);
});

test('a connection of another process (here, a second one to the same file) sees the count move at its next read', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'memory-auth-gen-'));
  const first = openDatabase(join(dir, 'memory.db'));
  const second = openDatabase(join(dir, 'memory.db'));
  try {
    const writer = new SqliteKeyStore(first);
    const tenant = await writer.createTenant({ name: 't', limits: LIMITS });
    await writer.createKey(tenant.tenant_id, { keyId: 'key_1', keyHash: 'hash_1' });
    const reader = new SqliteKeyStore(second);
    const before = reader.authGeneration();
    await writer.revoke({ keyId: 'key_1' });
    expect(reader.authGeneration()).toBe(before + 1);
  } finally {
    first.close();
    second.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
