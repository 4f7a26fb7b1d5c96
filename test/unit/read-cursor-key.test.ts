import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { jest } from '@jest/globals';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { lambdaContext } from '../../local/lambda-context.js';
import { documentClient } from '../../shared/adapters/aws/dynamodb/client.js';
import { DynamoDbRecordStore } from '../../shared/adapters/aws/dynamodb/record-store.js';
import { CursorSealer } from '../../shared/domain/cursor-sealer.js';
import { encodeCursor } from '../../shared/domain/listing.js';
import { newRecord } from '../../shared/domain/record.js';
import { createTestTables, describeWithDynamoDb, type TestTables } from '../support/dynamodb.js';
import { resealUnkeyed } from '../support/forged-cursor.js';

/**
 * The read Lambda's entry as AWS runs it (functions/read/index.ts, one cold start): DynamoDB Local for the
 * records, and Secrets Manager, which cannot run here, mocked at its SDK client. The cursor key is read on
 * the first listing and then kept; a failed read is a 500 with the request id, and is read again next time.
 */

const secrets = mockClient(SecretsManagerClient);
const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:DataCursorKey-AbCdEf';
const SECRET = 'k7Qm2Zx9LwR4tY8pN3vB6cH1jD5sF0gAeU2iO7yT4rW9qE3uI6oP8aS1dG5hJ2lK';
const TENANT = '01900000-0000-7000-8000-0000000000cc';

function event(query: Record<string, string> | null, id?: string): APIGatewayProxyEvent {
  return {
    httpMethod: 'GET',
    path: id ? `/api/v1/record/${id}` : '/api/v1/record',
    headers: {},
    multiValueHeaders: {},
    queryStringParameters: query,
    multiValueQueryStringParameters: null,
    pathParameters: id ? { id } : null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    resource: id ? '/api/v1/record/{id}' : '/api/v1/record',
    requestContext: {
      authorizer: { tenantId: TENANT, keyId: 'key_0000000000000001', recordQuota: 10, queryQuota: 10, rate: 5, burst: 5, scopes: 'read', agentId: '', expiresAt: '' },
    } as unknown as APIGatewayProxyEvent['requestContext'],
  };
}

describeWithDynamoDb('the read entry and its cursor key in Secrets Manager', (endpoint) => {
  let tables: TestTables;
  let handler: (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
  const ids: string[] = [];
  const env = { ...process.env };

  beforeAll(async () => {
    tables = await createTestTables(endpoint);
    const records = [0, 1, 2].map((i) => newRecord(TENANT, { agent_id: 'a', type: 'fact', title: `r${i}`, body: 'b' }, new Date(Date.UTC(2026, 0, 1, 0, 0, i))));
    await new DynamoDbRecordStore(documentClient(tables.client), tables.names).import(TENANT, records);
    ids.push(...records.map((r) => r.id));
    Object.assign(process.env, {
      AWS_REGION: 'eu-west-1',
      DYNAMODB_ENDPOINT: endpoint,
      MEMORY_RECORDS_TABLE: tables.names.records,
      MEMORY_TENANTS_TABLE: tables.names.tenants,
      MEMORY_USAGE_TABLE: tables.names.usage,
      MEMORY_IDEMPOTENCY_TABLE: tables.names.idempotency,
      MEMORY_CURSOR_SECRET_ARN: SECRET_ARN,
    });
    // The entry reads its settings once, at import: the cold start.
    ({ handler } = (await import('../../functions/read/index.js')) as unknown as { handler: typeof handler });
  });
  afterAll(async () => {
    process.env = env;
    secrets.restore();
    await tables.drop();
  });

  const list = async (query: Record<string, string>, requestId?: string) => {
    const r = await handler(event(query), lambdaContext('read', requestId));
    return { status: r.statusCode, body: JSON.parse(r.body) };
  };

  test('a failed read of the secret is a 500 with the request id, the cause in the log; a read by id needs no key', async () => {
    secrets.on(GetSecretValueCommand).rejects(Object.assign(new Error('User is not authorized to perform: secretsmanager:GetSecretValue'), { name: 'AccessDeniedException' }));
    // Powertools writes an error to stderr; both streams are read, to not depend on which.
    const lines: string[] = [];
    const capture = (chunk: string | Uint8Array) => {
      lines.push(chunk.toString());
      return true;
    };
    const spies = [jest.spyOn(process.stdout, 'write').mockImplementation(capture), jest.spyOn(process.stderr, 'write').mockImplementation(capture)];
    let failed;
    try {
      failed = await list({ limit: '1' }, 'req-secret-down');
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(failed).toEqual({ status: 500, body: { error: 'internal_error', message: expect.any(String), request_id: 'req-secret-down' } });
    const logged = lines.join('');
    expect(logged).toContain('req-secret-down');
    expect(logged).toContain(`cannot read the listing cursors' key from Secrets Manager (${SECRET_ARN})`);
    expect(logged).toContain('not authorized');
    expect(logged).not.toContain(SECRET);

    const byId = await handler(event(null, ids[0]), lambdaContext('read'));
    expect(byId.statusCode).toBe(200);
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(1);
  });

  test('once Secrets Manager answers, the key is read once for the listings that follow, and their cursors page on', async () => {
    secrets.reset();
    secrets.on(GetSecretValueCommand).resolves({ SecretString: SECRET, $metadata: {} });
    const first = await list({ limit: '1', order: 'asc' });
    expect(first.status).toBe(200);
    const second = await list({ limit: '1', cursor: first.body.next_cursor });
    const third = await list({ limit: '1', cursor: second.body.next_cursor });
    expect([first, second, third].map((page) => page.body.records.map((r: { id: string }) => r.id))).toEqual([[ids[0]], [ids[1]], [ids[2]]]);
    expect(third.body.next_cursor).toBeNull();
    // The failed read was not kept, and the one that succeeded is: one call for three listings.
    expect(secrets.commandCalls(GetSecretValueCommand).map((call) => call.args[0].input)).toEqual([{ SecretId: SECRET_ARN }]);
  });

  test("the key is the secret string's bytes; a cursor sealed otherwise is 400 invalid_cursor", async () => {
    const after = { created_at: new Date(Date.UTC(2026, 0, 1)).toISOString(), id: ids[0]! };
    const sealed = encodeCursor(TENANT, { filters: {}, order: 'asc' }, after, new CursorSealer(Buffer.from(SECRET)));
    expect((await list({ cursor: sealed })).body.records.map((r: { id: string }) => r.id)).toEqual(ids.slice(1));
    for (const other of [resealUnkeyed(TENANT, sealed), encodeCursor(TENANT, { filters: {}, order: 'asc' }, after, new CursorSealer(Buffer.alloc(64, 1)))]) {
      expect(await list({ cursor: other })).toEqual({ status: 400, body: { error: 'invalid_cursor', message: expect.any(String) } });
    }
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(1);
  });
});
