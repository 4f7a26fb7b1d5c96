import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteAdapters } from '../../shared/adapters/local/index.js';
import { SqliteRecordStore } from '../../shared/adapters/local/record-store.js';
import { IDEMPOTENCY_TTL_MS } from '../../shared/domain/idempotency.js';
import { newRecord } from '../../shared/domain/record.js';
import { runPortSuite } from './port-suite.js';

runPortSuite(
  'SQLite',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'memory-ports-'));
    const adapters = openSqliteAdapters(join(dir, 'memory.db'));
    return {
      ...adapters,
      settle: async () => undefined,
      close: async () => {
        adapters.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  { createQueuesJob: true },
);

describe('SQLite record store, with a controlled clock', () => {
  test('an idempotency key is remembered for 24 hours, then a new write is stored', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'memory-ports-'));
    const adapters = openSqliteAdapters(join(dir, 'memory.db'));
    let now = Date.parse('2026-11-10T12:00:00.000Z');
    const records = new SqliteRecordStore(adapters.db, () => now);
    const tenant = (await adapters.keys.createTenant({ name: 't', limits: { recordQuota: 10, queryQuota: 10, rate: 1, burst: 1 } })).tenant_id;
    const write = () =>
      records.create(tenant, newRecord(tenant, { agent_id: 'a', type: 'fact', title: 't', body: 'b' }, new Date(now)), {
        recordQuota: 10,
        month: '2026-11',
        idempotency: { key: 'k', requestHash: 'h' },
      });
    try {
      const first = await write();
      now += IDEMPOTENCY_TTL_MS - 1;
      expect(await write()).toEqual({ receipt: first.receipt, replayed: true });
      now += 1;
      const later = await write();
      expect(later.replayed).toBe(false);
      expect(later.receipt.id).not.toBe(first.receipt.id);
      now += IDEMPOTENCY_TTL_MS;
      expect(records.purgeExpiredIdempotencyKeys()).toBe(1);
    } finally {
      adapters.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
