import { Logger } from '@aws-lambda-powertools/logger';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAuthorizerHandler } from '../../functions/authorizer/handler.js';
import { createGatewayServer } from '../../local/gateway.js';
import { issueKey } from '../../local/tenants.js';
import { openDatabase } from '../../shared/adapters/local/database.js';
import type { Db } from '../../shared/adapters/local/db.js';
import { SqliteKeyStore } from '../../shared/adapters/local/key-store.js';
import { seedOf } from '../support/seed.js';

/**
 * The local gateway's cache of authorizations on SQLite, as a model-based test (fast-check's `fc.commands`):
 * requests with any of the keys, interleaved with what the admin CLI does on its own connection to the same
 * file (revoke a key, change a tenant's limits, delete a tenant, issue a key, mark a key used) and restarts
 * of the server. The cache keeps an answer for a minute here, far longer than any run, so only its count of
 * changes (`authGeneration`) can make it see a change. The model is the keys and tenants as stored: a
 * request answers 200 with its tenant's current limits and its key's id exactly when the key is active and
 * its tenant exists, and 401 otherwise, from the first request after the change. A gateway that keeps its
 * answers without that count (planted below) fails it.
 */

const logger = new Logger({ logLevel: 'SILENT' });
const TENANTS = 2;
const LIMITS = { recordQuota: 100, queryQuota: 100, rate: 1000, burst: 1000 };

interface ModelKey {
  apiKey: string;
  keyId: string;
  tenant: number;
  active: boolean;
}

interface Model {
  keys: ModelKey[];
  /** Per tenant: its record quota, or null once deleted. */
  quotas: (number | null)[];
}

interface Real {
  file: string;
  /** The admin CLI's connection and store. */
  adminDb: Db;
  admin: SqliteKeyStore;
  tenantIds: string[];
  server: Server | null;
  serverDb: Db | null;
  url: string;
  withGeneration: boolean;
}

type Command = fc.AsyncCommand<Model, Real>;

async function startServer(r: Real): Promise<void> {
  const db = openDatabase(r.file);
  const keys = new SqliteKeyStore(db);
  const server = createGatewayServer({
    // The route answers what the authorizer said of the key (its context, as a handler sees it).
    routes: [{ method: 'GET', path: '/whoami', name: 'whoami', handler: async (event) => ({ statusCode: 200, body: JSON.stringify(event.requestContext.authorizer) }) }],
    authorizer: createAuthorizerHandler({ keys, logger }),
    logger,
    authCacheMs: 60_000,
    ...(r.withGeneration ? { authGeneration: () => keys.authGeneration() } : {}),
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.server = server;
  r.serverDb = db;
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function stopServer(r: Real): Promise<void> {
  const server = r.server;
  if (server) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  r.serverDb?.close();
  r.server = null;
  r.serverDb = null;
}

class Request implements Command {
  constructor(readonly key: number) {}
  check = (m: Model) => m.keys.length > 0;
  async run(m: Model, r: Real) {
    const key = m.keys[this.key % m.keys.length]!;
    const response = await fetch(`${r.url}/whoami`, { headers: { authorization: `Bearer ${key.apiKey}` } });
    const body = (await response.json()) as Record<string, string>;
    const quota = m.quotas[key.tenant];
    const expected = key.active && quota !== null && quota !== undefined ? { status: 200, keyId: key.keyId, recordQuota: String(quota) } : { status: 401 };
    const seen = response.status === 200 ? { status: 200, keyId: body.keyId, recordQuota: String(body.recordQuota) } : { status: response.status };
    expect(seen).toEqual(expected);
  }
  toString = () => `request(key ${this.key})`;
}

class Revoke implements Command {
  constructor(readonly key: number) {}
  check = (m: Model) => m.keys.length > 0;
  async run(m: Model, r: Real) {
    const key = m.keys[this.key % m.keys.length]!;
    await r.admin.revoke({ keyId: key.keyId });
    key.active = false;
  }
  toString = () => `revoke(key ${this.key})`;
}

class UpdateTenant implements Command {
  constructor(readonly tenant: number, readonly quota: number) {}
  check = (m: Model) => m.quotas[this.tenant] !== null;
  async run(m: Model, r: Real) {
    await r.admin.updateTenant(r.tenantIds[this.tenant]!, { limits: { recordQuota: this.quota } });
    m.quotas[this.tenant] = this.quota;
  }
  toString = () => `updateTenant(${this.tenant}, recordQuota ${this.quota})`;
}

class DeleteTenant implements Command {
  constructor(readonly tenant: number) {}
  check = (m: Model) => m.quotas[this.tenant] !== null;
  async run(m: Model, r: Real) {
    await r.admin.deleteTenant(r.tenantIds[this.tenant]!);
    m.quotas[this.tenant] = null;
    for (const key of m.keys) if (key.tenant === this.tenant) key.active = false;
  }
  toString = () => `deleteTenant(${this.tenant})`;
}

class IssueKey implements Command {
  constructor(readonly tenant: number) {}
  check = (m: Model) => m.quotas[this.tenant] !== null;
  async run(m: Model, r: Real) {
    const issued = await issueKey(r.admin, r.tenantIds[this.tenant]!);
    m.keys.push({ apiKey: issued.api_key, keyId: issued.key_id, tenant: this.tenant, active: true });
  }
  toString = () => `issueKey(${this.tenant})`;
}

/** The authorizer's daily mark of use, by the admin connection here: it changes no answer, so it must not matter. */
class MarkUsed implements Command {
  constructor(readonly key: number, readonly day: string) {}
  check = (m: Model) => m.keys.length > 0;
  async run(m: Model, r: Real) {
    const key = m.keys[this.key % m.keys.length]!;
    await r.admin.markUsed({ tenant_id: r.tenantIds[key.tenant]!, key_id: key.keyId }, this.day);
  }
  toString = () => `markUsed(key ${this.key}, ${this.day})`;
}

class Restart implements Command {
  check = () => true;
  async run(_m: Model, r: Real) {
    await stopServer(r);
    await startServer(r);
  }
  toString = () => 'restart';
}

const commands = [
  fc.nat({ max: 9 }).map((k) => new Request(k)),
  fc.nat({ max: 9 }).map((k) => new Request(k)),
  fc.nat({ max: 9 }).map((k) => new Revoke(k)),
  fc.tuple(fc.nat({ max: TENANTS - 1 }), fc.integer({ min: 1, max: 1000 })).map(([t, q]) => new UpdateTenant(t, q)),
  fc.nat({ max: TENANTS - 1 }).map((t) => new DeleteTenant(t)),
  fc.nat({ max: TENANTS - 1 }).map((t) => new IssueKey(t)),
  fc.tuple(fc.nat({ max: 9 }), fc.constantFrom('2026-11-27', '2026-11-28', '2026-11-29')).map(([k, d]) => new MarkUsed(k, d)),
  fc.constant(new Restart()),
];

async function runModel({ seed, runs, withGeneration }: { seed: number; runs: number; withGeneration: boolean }): Promise<void> {
  await fc.assert(
    fc.asyncProperty(fc.commands(commands, { maxCommands: 30 }), async (cmds) => {
      const dir = mkdtempSync(join(tmpdir(), 'memory-auth-model-'));
      const file = join(dir, 'memory.db');
      const adminDb = openDatabase(file);
      const admin = new SqliteKeyStore(adminDb);
      const real: Real = { file, adminDb, admin, tenantIds: [], server: null, serverDb: null, url: '', withGeneration };
      const model: Model = { keys: [], quotas: [] };
      try {
        for (let t = 0; t < TENANTS; t++) {
          const tenant = await admin.createTenant({ name: `t${t}`, limits: { ...LIMITS, recordQuota: 10 + t } });
          real.tenantIds.push(tenant.tenant_id);
          model.quotas.push(10 + t);
          for (let k = 0; k < 2; k++) {
            const issued = await issueKey(admin, tenant.tenant_id);
            model.keys.push({ apiKey: issued.api_key, keyId: issued.key_id, tenant: t, active: true });
          }
        }
        await startServer(real);
        await fc.asyncModelRun(() => ({ model, real }), cmds);
      } finally {
        await stopServer(real);
        adminDb.close();
        rmSync(dir, { recursive: true, force: true });
      }
    }),
    { seed, numRuns: runs },
  );
}

const given = process.env.MODEL_SEED;
const SEED = seedOf(given, 20261128);
const RUNS = Number(process.env.MODEL_RUNS ?? 60);

test(`every request is answered as the keys and tenants stand, whatever the admin CLI changed while the gateway kept answers (seed ${SEED}, ${RUNS} runs)`, async () => {
  await runModel({ seed: SEED, runs: RUNS, withGeneration: true });
}, 300_000);

test('a gateway that keeps its answers for their time alone, as before the count of changes, is caught', async () => {
  await expect(runModel({ seed: 20261128, runs: 100, withGeneration: false })).rejects.toThrow(/Property failed after \d+ tests[\s\S]*Counterexample/);
}, 300_000);
