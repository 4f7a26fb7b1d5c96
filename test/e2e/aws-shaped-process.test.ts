import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { Client, aRecord, eventually } from '../support/local-service.js';
import { admin, killAll, removeDir, runAdmin, startServer, tempDir, waitFor, type ServerProcess } from '../support/child-server.js';
import { dynamoDbClient } from '../../shared/adapters/aws/dynamodb/client.js';
import { missingTables } from '../../shared/adapters/aws/dynamodb/ensure-tables.js';
import { describeWithDynamoDb } from '../support/dynamodb.js';

/**
 * The AWS-shaped local mode as a user runs it: `MEMORY_BACKEND=dynamodb DYNAMODB_ENDPOINT=… npm start`
 * creates its tables in DynamoDB Local, and the admin CLI works on the same tables with `--backend dynamodb`.
 */
describeWithDynamoDb('the AWS-shaped local mode, as child processes', (endpoint) => {
  const prefix = `p${randomUUID().slice(0, 8)}`;
  const tables = {
    MEMORY_RECORDS_TABLE: `${prefix}-records`,
    MEMORY_TENANTS_TABLE: `${prefix}-tenants`,
    MEMORY_USAGE_TABLE: `${prefix}-usage`,
    MEMORY_IDEMPOTENCY_TABLE: `${prefix}-idempotency`,
  };
  let dir: string;
  let server: ServerProcess;
  // The CLI is given the backend by flag; the server by MEMORY_BACKEND.
  const cliEnv = () => ({ MEMORY_DATA_DIR: dir, DYNAMODB_ENDPOINT: endpoint, ...tables });

  beforeAll(async () => {
    dir = tempDir('memory-aws-shaped-');
    server = await startServer(dir, { MEMORY_BACKEND: 'dynamodb', DYNAMODB_ENDPOINT: endpoint, MEMORY_JOB_POLL_MS: '50', ...tables });
  });
  afterAll(async () => {
    killAll();
    await server?.closed;
    removeDir(dir);
  });

  test('the server creates its tables, says where the data is, and prints the first key once', async () => {
    expect(server.stdout()).toContain(`records in DynamoDB at ${endpoint} (table ${tables.MEMORY_RECORDS_TABLE})`);
    await waitFor(() => /Its API key, shown only this once:\s+mem_/.test(server.stdout()), 5000, 'the first key');
  });

  test('tenant create, key create, key revoke and usage work on DynamoDB with the same JSON', async () => {
    const created = await admin(['--backend', 'dynamodb', 'tenant', 'create', '--name', 'acme', '--record-quota', '5'], cliEnv());
    expect(Object.keys(created).sort()).toEqual(['api_key', 'key_id', 'tenant_id']);
    const tenants: any[] = await admin(['--backend', 'dynamodb', 'tenant', 'list'], cliEnv());
    expect(tenants.map((t) => t.name)).toEqual(['default', 'acme']);
    expect(tenants[1]).toMatchObject({ tenant_id: created.tenant_id, record_quota: 5 });

    const api = new Client(server.url, created.api_key);
    const written = await api.remember(aRecord({ title: 'Deploys run on Fridays' }));
    expect(written.status).toBe(201);
    // Search follows the table through the stream: eventually consistent, typically well under a second.
    const hits = await eventually(async () => {
      const res = await api.recall({ q: 'deploy' });
      return res.body.length > 0 ? res.body : null;
    });
    expect(hits[0]).toMatchObject({ id: written.body.id, title: 'Deploys run on Fridays' });
    // The classifier, fed through the stream and the local queue, attaches its suggestion.
    await eventually(async () => (await api.recall({ q: 'deploy' })).body[0]?.classification);

    const usage: any[] = await admin(['--backend', 'dynamodb', 'usage', '--tenant', created.tenant_id], cliEnv());
    expect(usage).toEqual([expect.objectContaining({ tenant_id: created.tenant_id, records: 1, queries: expect.any(Number) })]);

    const second = await admin(['--backend', 'dynamodb', 'key', 'create', '--tenant', created.tenant_id, '--rate', '2', '--burst', '3'], cliEnv());
    const revoked = await admin(['--backend', 'dynamodb', 'key', 'revoke', created.key_id], cliEnv());
    expect(revoked).toMatchObject({ key_id: created.key_id, status: 'revoked', revoked_at: expect.any(String) });
    // The gateway caches an authorizer answer for at most MEMORY_AUTH_CACHE_SECONDS (2 s).
    await eventually(async () => (await api.recall({ q: 'x' })).status === 401, 6000);
    expect((await new Client(server.url, second.api_key).recall({ q: 'deploy' })).status).toBe(200);

    const client = dynamoDbClient({ region: 'us-east-1', dynamodbEndpoint: endpoint });
    try {
      const { Items } = await client.send(new ScanCommand({ TableName: tables.MEMORY_TENANTS_TABLE }));
      const stored = JSON.stringify(Items);
      for (const key of [created.api_key, second.api_key]) expect(stored.includes(key.slice('mem_'.length))).toBe(false);
    } finally {
      client.destroy();
    }
  });

  test('errors are the same JSON as on SQLite', async () => {
    const missing = await runAdmin(['--backend', 'dynamodb', 'key', 'revoke', 'key_0000000000000000'], cliEnv());
    expect(missing.code).toBe(1);
    expect(missing.error).toEqual({ error: 'not_found', message: 'no such key' });
    const bad = await runAdmin(['--backend', 'postgres', 'tenant', 'list'], cliEnv());
    expect(bad.code).toBe(2);
    expect(bad.error).toMatchObject({ error: 'usage' });
  });

  test('on tables that do not exist the CLI exits 1 with no_database and creates none; --create makes them', async () => {
    const other = { ...cliEnv(), MEMORY_TENANTS_TABLE: `${prefix}-elsewhere-tenants`, MEMORY_USAGE_TABLE: `${prefix}-elsewhere-usage` };
    const missing = await runAdmin(['--backend', 'dynamodb', 'tenant', 'list'], other);
    expect({ code: missing.code, stdout: missing.stdout }).toEqual({ code: 1, stdout: '' });
    expect(missing.error).toEqual({
      error: 'no_database',
      message: expect.stringContaining('--create'),
      endpoint,
      tables: `${prefix}-elsewhere-tenants,${prefix}-elsewhere-usage`,
    });
    const client = dynamoDbClient({ region: 'us-east-1', dynamodbEndpoint: endpoint });
    try {
      const roles = {
        records: tables.MEMORY_RECORDS_TABLE,
        tenants: other.MEMORY_TENANTS_TABLE,
        usage: other.MEMORY_USAGE_TABLE,
        idempotency: tables.MEMORY_IDEMPOTENCY_TABLE,
      };
      expect(await missingTables(client, roles)).toEqual([roles.tenants, roles.usage]);
      expect(await admin(['--backend', 'dynamodb', '--create', 'tenant', 'list'], other)).toEqual([]);
      expect(await missingTables(client, roles)).toEqual([]);
    } finally {
      client.destroy();
    }
  });
});
