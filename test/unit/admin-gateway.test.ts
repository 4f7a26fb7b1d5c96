import { jest } from '@jest/globals';
import { DynamoDbRecordStore } from '../../shared/adapters/aws/dynamodb/record-store.js';
import { ApiGatewayKeyRegistry, type KeyThrottle, type Registration } from '../../shared/adapters/aws/gateway/usage-plans.js';
import { openSqliteAdapters, type SqliteAdapters } from '../../shared/adapters/local/index.js';
import { adminCommand, CliError } from '../../local/admin.js';
import { openAdminStores, type AdminStores } from '../../local/backends.js';
import { loadConfig } from '../../local/config.js';

/**
 * The admin CLI's wiring to API Gateway, in process: real SQLite key store, the gateway registry replaced
 * by a fake, since API Gateway cannot run here. The registry's own commands are in api-gateway-keys.test.ts;
 * the CLI as a process is in test/e2e/admin-cli.test.ts.
 */

let sqlite: SqliteAdapters;
let register: jest.Mock<(keyId: string, limits: KeyThrottle) => Promise<Registration>>;
let disable: jest.Mock<(keyId: string) => Promise<boolean>>;
let move: jest.Mock<(keyId: string, limits: KeyThrottle) => Promise<Registration & { moved: boolean }>>;

const stores = async (): Promise<AdminStores> => ({
  keys: sqlite.keys,
  usage: sqlite.usage,
  records: sqlite.records,
  gateway: { register, disable, move },
  close: () => undefined,
});
// No authorization cache to wait for (tenant delete waits it out after revoking the keys).
const admin = (...argv: string[]) => adminCommand(argv, { MEMORY_AUTH_CACHE_SECONDS: '0' }, stores) as Promise<any>;

/** The CliError the command fails with. */
async function failure(argv: string[]): Promise<CliError> {
  const error = await admin(...argv).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CliError);
  return error as CliError;
}

beforeEach(() => {
  sqlite = openSqliteAdapters(':memory:');
  register = jest.fn(async () => ({ apiKeyId: 'ak', usagePlanId: 'plan' }));
  disable = jest.fn(async () => true);
  move = jest.fn(async () => ({ apiKeyId: 'ak', usagePlanId: 'plan', moved: true }));
});
afterEach(() => sqlite.close());

test('tenant create registers the first key at the tenant limits; the output is unchanged', async () => {
  const created = await admin('tenant', 'create', '--name', 'acme', '--rate', '3', '--burst', '4');
  expect(Object.keys(created).sort()).toEqual(['api_key', 'key_id', 'tenant_id']);
  expect(register.mock.calls).toEqual([[created.key_id, { rate: 3, burst: 4 }]]);
});

test('key create registers at the per-key limits, field by field over the tenant limits', async () => {
  const { tenant_id } = await admin('tenant', 'create', '--name', 'acme', '--rate', '3', '--burst', '4');
  const own = await admin('key', 'create', '--tenant', tenant_id, '--rate', '7');
  const plain = await admin('key', 'create', '--tenant', tenant_id);
  expect(register.mock.calls.slice(1)).toEqual([
    [own.key_id, { rate: 7, burst: 4 }],
    [plain.key_id, { rate: 3, burst: 4 }],
  ]);
  // Stored before it is registered: the store keeps the per-key limits it was given.
  expect(await sqlite.keys.listKeys(tenant_id)).toContainEqual(expect.objectContaining({ key_id: own.key_id, rate: 7, burst: null }));
});

test('when API Gateway fails, key create revokes the stored key and says how to retry', async () => {
  const { tenant_id } = await admin('tenant', 'create', '--name', 'acme');
  register.mockRejectedValueOnce(new Error('AccessDeniedException'));
  const error = await failure(['key', 'create', '--tenant', tenant_id]);
  const [, [keyId]] = register.mock.calls as [unknown, [string]];
  expect(error.code).toBe('gateway_error');
  expect(error.details).toEqual({ tenant_id, key_id: keyId });
  expect(error.message).toContain(`API Gateway did not register key ${keyId} (AccessDeniedException)`);
  expect(error.message).toContain('the key was revoked');
  expect((await sqlite.keys.listKeys(tenant_id)).find((k) => k.key_id === keyId)?.status).toBe('revoked');

  // Running it again issues a new key, which works.
  const again = await admin('key', 'create', '--tenant', tenant_id);
  expect(again.key_id).not.toBe(keyId);
});

test('when API Gateway fails on tenant create, the tenant stays and the error says to create its key', async () => {
  register.mockRejectedValueOnce(new Error('Throttling'));
  const error = await failure(['tenant', 'create', '--name', 'acme']);
  const [tenant] = await sqlite.keys.listTenants();
  expect(error.details).toEqual({ tenant_id: tenant!.tenant_id, key_id: expect.stringMatching(/^key_/) });
  expect(error.message).toContain(`run key create --tenant ${tenant!.tenant_id}`);
  expect((await sqlite.keys.listKeys(tenant!.tenant_id)).map((k) => k.status)).toEqual(['revoked']);
});

test('if revoking after the gateway failure fails too, the error says the key is stored and must be revoked', async () => {
  const { tenant_id } = await admin('tenant', 'create', '--name', 'acme');
  register.mockRejectedValueOnce(new Error('Throttling'));
  jest.spyOn(sqlite.keys, 'revoke').mockRejectedValueOnce(new Error('database is locked'));
  const error = await failure(['key', 'create', '--tenant', tenant_id]);
  expect(error.message).toContain('revoking it failed too (database is locked): the key is stored but API Gateway refuses it');
  expect(error.message).toMatch(/Run key revoke key_[0-9a-f]{16}; then, to retry, run the same key create again\.$/);
});

test('key revoke disables the API key after the revocation is stored, by key id even when given the secret', async () => {
  const created = await admin('tenant', 'create', '--name', 'acme');
  disable.mockImplementationOnce(async () => {
    expect((await sqlite.keys.listKeys(created.tenant_id))[0]!.status).toBe('revoked');
    return true;
  });
  const revoked = await admin('key', 'revoke', created.api_key);
  expect(revoked).toMatchObject({ key_id: created.key_id, status: 'revoked' });
  expect(disable.mock.calls).toEqual([[created.key_id]]);
});

test('when disabling fails, the key stays revoked and running key revoke again retries', async () => {
  const created = await admin('tenant', 'create', '--name', 'acme');
  disable.mockRejectedValueOnce(new Error('TooManyRequestsException'));
  const error = await failure(['key', 'revoke', created.key_id]);
  expect(error).toMatchObject({ code: 'gateway_error', details: { tenant_id: created.tenant_id, key_id: created.key_id } });
  expect(error.message).toContain(`Run key revoke ${created.key_id} again`);
  expect((await sqlite.keys.listKeys(created.tenant_id))[0]!.status).toBe('revoked');

  expect(await admin('key', 'revoke', created.key_id)).toMatchObject({ key_id: created.key_id, status: 'revoked' });
  expect(disable).toHaveBeenCalledTimes(2);
});

test('tenant update with --rate or --burst moves the active keys that use the tenant limits, at their new effective limits', async () => {
  const { tenant_id, key_id: first } = await admin('tenant', 'create', '--name', 'acme', '--rate', '3', '--burst', '4');
  const ownRate = await admin('key', 'create', '--tenant', tenant_id, '--rate', '7');
  const ownBoth = await admin('key', 'create', '--tenant', tenant_id, '--rate', '7', '--burst', '8');
  const revoked = await admin('key', 'create', '--tenant', tenant_id);
  await admin('key', 'revoke', revoked.key_id);

  expect(await admin('tenant', 'update', '--tenant', tenant_id, '--record-quota', '9', '--name', 'Acme Ltd')).toMatchObject({ name: 'Acme Ltd', record_quota: 9, rate: 3 });
  expect(move).not.toHaveBeenCalled();

  const updated = await admin('tenant', 'update', '--tenant', tenant_id, '--burst', '12');
  expect(updated).toMatchObject({ tenant_id, record_quota: 9, rate: 3, burst: 12 });
  // The key with its own rate and burst, and the revoked key, are not in a plan of the tenant's limits.
  expect(move.mock.calls).toEqual([
    [first, { rate: 3, burst: 12 }],
    [ownRate.key_id, { rate: 7, burst: 12 }],
  ]);
  expect(move.mock.calls.map(([keyId]) => keyId)).not.toContain(ownBoth.key_id);
});

test('when a move fails, the tenant is updated and the error names the key; running the update again retries every key', async () => {
  const { tenant_id, key_id } = await admin('tenant', 'create', '--name', 'acme');
  move.mockRejectedValueOnce(new Error('TooManyRequestsException'));
  const error = await failure(['tenant', 'update', '--tenant', tenant_id, '--rate', '5']);
  expect(error).toMatchObject({ code: 'gateway_error', details: { tenant_id, key_id } });
  expect(error.message).toContain('Run the same tenant update again');
  expect((await sqlite.keys.getTenant(tenant_id))!.limits.rate).toBe(5);

  await admin('tenant', 'update', '--tenant', tenant_id, '--rate', '5');
  expect(move.mock.calls).toEqual([
    [key_id, { rate: 5, burst: 40 }],
    [key_id, { rate: 5, burst: 40 }],
  ]);
});

test('tenant delete disables every key of the tenant in API Gateway before it erases; if that fails nothing is erased', async () => {
  const { tenant_id, key_id } = await admin('tenant', 'create', '--name', 'acme');
  const other = await admin('key', 'create', '--tenant', tenant_id);
  disable.mockRejectedValueOnce(new Error('AccessDeniedException'));
  const error = await failure(['tenant', 'delete', '--tenant', tenant_id, '--confirm']);
  expect(error).toMatchObject({ code: 'gateway_error', details: { tenant_id, key_id } });
  expect(error.message).toContain('Nothing was erased');
  expect(await sqlite.keys.getTenant(tenant_id)).not.toBeNull();

  const report = await admin('tenant', 'delete', '--tenant', tenant_id, '--confirm');
  expect(report).toMatchObject({ tenant_id, removed: { records: 0, api_keys: 2 }, api_gateway_keys_disabled: 2 });
  expect(disable.mock.calls.slice(1)).toEqual([[key_id], [other.key_id]]);
  expect(await sqlite.keys.getTenant(tenant_id)).toBeNull();
});

describe('openAdminStores', () => {
  const GATEWAY = { MEMORY_API_ID: 'a1b2c3d4e5', MEMORY_API_STAGE: 'prod', MEMORY_DEFAULT_USAGE_PLAN_ID: 'plan-default' };

  test('gives a gateway registry only on the dynamodb backend with the gateway settings', async () => {
    // No DYNAMODB_ENDPOINT: nothing is sent anywhere until a command runs.
    const onAws = await openAdminStores(loadConfig({ MEMORY_BACKEND: 'dynamodb', AWS_REGION: 'eu-west-1', ...GATEWAY }));
    const withoutGateway = await openAdminStores(loadConfig({ MEMORY_BACKEND: 'dynamodb', AWS_REGION: 'eu-west-1' }));
    try {
      expect(onAws.gateway).toBeInstanceOf(ApiGatewayKeyRegistry);
      expect(withoutGateway.gateway).toBeNull();
      // export, import and tenant delete need the records too, on every backend.
      expect(onAws.records).toBeInstanceOf(DynamoDbRecordStore);
    } finally {
      onAws.close();
      withoutGateway.close();
    }
  });
});
