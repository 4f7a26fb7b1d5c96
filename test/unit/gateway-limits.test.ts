import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { createAuthorizerHandler } from '../../functions/authorizer/handler.js';
import { createRecordHandler } from '../../functions/record/handler.js';
import { lambdaContext } from '../../local/lambda-context.js';
import { gatewayKeyValue, generateKeyId, hashApiKey } from '../../shared/domain/api-key.js';
import { LIMITS } from '../../shared/domain/record.js';
import { AUTHORIZER_FAILURE_MESSAGE } from '../../shared/http/auth-context.js';
import type { KeyStore, RecordStore } from '../../shared/ports.js';

const logger = new Logger({ logLevel: 'SILENT' });

describe('what API Gateway does not check for us', () => {
  test('the usage-plan key value is 20 to 128 alphanumeric characters, one per key id', () => {
    const ids = Array.from({ length: 100 }, generateKeyId);
    for (const id of ids) expect(gatewayKeyValue(id)).toMatch(/^[A-Za-z0-9]{20,128}$/);
    expect(new Set(ids.map(gatewayKeyValue)).size).toBe(ids.length);
  });

  test('the authorizer names the usage-plan key of the caller\'s key', async () => {
    const keyId = generateKeyId();
    const keys = {
      findByHash: async (hash: string) =>
        hash === hashApiKey('mem_secret')
          ? {
              key: {
                key_id: keyId,
                tenant_id: 't',
                status: 'active',
                scopes: ['read', 'write', 'delete'],
                agent_id: null,
                expires_at: null,
                last_used_on: '9999-12-31',
                rate: null,
                burst: null,
                created_at: '',
                revoked_at: null,
              },
              tenant: { tenant_id: 't', name: 'n', limits: { recordQuota: 1, queryQuota: 1, rate: 1, burst: 1 }, created_at: '' },
            }
          : null,
    } as unknown as KeyStore;
    const result = await createAuthorizerHandler({ keys, logger })(
      { headers: { Authorization: 'Bearer mem_secret' }, methodArn: 'arn:aws:execute-api:eu-west-1:1:api/prod/POST/api/v1/record' } as never,
      lambdaContext('authorizer'),
    );
    expect(result.usageIdentifierKey).toBe(gatewayKeyValue(keyId));
  });

  test('an authorizer whose store fails logs the line the AuthorizerFailures filter counts, and does not say Unauthorized', async () => {
    const lines: unknown[][] = [];
    const failing = new Logger({ logLevel: 'SILENT' });
    failing.error = ((...args: unknown[]) => void lines.push(args)) as typeof failing.error;
    const keys = { findByHash: async () => Promise.reject(new Error('DynamoDB unreachable')) } as unknown as KeyStore;
    const run = createAuthorizerHandler({ keys, logger: failing })(
      { headers: { Authorization: 'Bearer mem_secret' }, methodArn: 'arn:aws:execute-api:eu-west-1:1:api/prod/POST/api/v1/record' } as never,
      lambdaContext('authorizer'),
    );
    await expect(run).rejects.toThrow('DynamoDB unreachable');
    expect(lines.map((l) => l[0])).toEqual([AUTHORIZER_FAILURE_MESSAGE]);
  });

  test('a body over 1 MiB is refused with 413 by the Lambda itself (API Gateway lets 10 MB through)', async () => {
    let stored = 0;
    const records = { create: async () => void stored++ } as unknown as RecordStore;
    const handler = createRecordHandler({ records, logger });
    const event = (body: string) =>
      ({
        httpMethod: 'POST',
        resource: '/api/v1/record',
        headers: { 'Content-Type': 'application/json' },
        body,
        isBase64Encoded: false,
        requestContext: {
          authorizer: { tenantId: 't', keyId: 'key_0000000000000001', recordQuota: 9, queryQuota: 9, rate: 1, burst: 1, scopes: 'write', agentId: '', expiresAt: '' },
        },
      }) as unknown as APIGatewayProxyEvent;
    const big = JSON.stringify({ agent_id: 'a', type: 'fact', title: 't', body: 'x'.repeat(LIMITS.requestBytes) });
    const res = await handler(event(big), lambdaContext('record'));
    expect(res.statusCode).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({ error: 'payload_too_large' });
    const encoded = { ...event(Buffer.from(big).toString('base64')), isBase64Encoded: true };
    expect((await handler(encoded, lambdaContext('record'))).statusCode).toBe(413);
    expect(stored).toBe(0);
  });
});

describe('the day a key was last used', () => {
  test('the authorizer records it once a day at most, and a failure to record it refuses nothing', async () => {
    const days: string[] = [];
    let lastUsed: string | null = null;
    let failing = false;
    const key = () => ({
      key_id: 'key_0000000000000001',
      tenant_id: 't',
      status: 'active',
      scopes: ['read'],
      agent_id: null,
      expires_at: null,
      last_used_on: lastUsed,
      rate: null,
      burst: null,
      created_at: '',
      revoked_at: null,
    });
    const keys = {
      findByHash: async () => ({ key: key(), tenant: { tenant_id: 't', name: 'n', limits: { recordQuota: 1, queryQuota: 1, rate: 1, burst: 1 }, created_at: '' } }),
      markUsed: async (_: unknown, day: string) => {
        if (failing) throw new Error('DynamoDB unreachable');
        days.push(day);
        lastUsed = day;
      },
    } as unknown as KeyStore;
    let now = new Date('2026-11-20T10:00:00.000Z');
    const authorize = createAuthorizerHandler({ keys, logger, now: () => now });
    const call = () =>
      authorize({ headers: { Authorization: 'Bearer mem_secret' }, methodArn: 'arn:aws:execute-api:eu-west-1:1:api/prod/GET/api/v1/usage' } as never, lambdaContext('authorizer'));
    for (let i = 0; i < 3; i++) await call();
    now = new Date('2026-11-21T00:00:01.000Z');
    await call();
    await call();
    expect(days).toEqual(['2026-11-20', '2026-11-21']);
    failing = true;
    now = new Date('2026-11-22T00:00:01.000Z');
    expect((await call()).policyDocument.Statement[0]!.Effect).toBe('Allow');
  });
});
