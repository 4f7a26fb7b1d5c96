import { jest } from '@jest/globals';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { createQueryHandler } from '../../functions/query/handler.js';
import { createRecordHandler } from '../../functions/record/handler.js';
import { lambdaContext } from '../../local/lambda-context.js';
import { AppError } from '../../shared/domain/errors.js';
import type { RecordStore, SearchIndex, UsageMeter } from '../../shared/ports.js';

const TENANT = '01900000-0000-7000-8000-0000000000aa';
const logger = new Logger({ logLevel: 'SILENT' });

function event(method: 'GET' | 'POST', body: unknown, query: Record<string, string> = {}): APIGatewayProxyEvent {
  return {
    httpMethod: method,
    path: method === 'POST' ? '/api/v1/record' : '/api/v1/query',
    headers: { 'content-type': 'application/json' },
    multiValueHeaders: {},
    queryStringParameters: query,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body: body === undefined ? null : JSON.stringify(body),
    isBase64Encoded: false,
    resource: method === 'POST' ? '/api/v1/record' : '/api/v1/query',
    requestContext: {
      authorizer: { tenantId: TENANT, keyId: 'key_0000000000000001', recordQuota: 10, queryQuota: 10, rate: 5, burst: 5, scopes: 'read,write,delete', agentId: '', expiresAt: '' },
    } as unknown as APIGatewayProxyEvent['requestContext'],
  };
}

/** The EMF documents Powertools printed while `run` ran. */
async function emitted(run: () => Promise<unknown>): Promise<Record<string, any>[]> {
  const lines: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(chunk.toString());
    return true;
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return lines
    .flatMap((l) => l.split('\n'))
    .filter((l) => l.includes('"_aws"'))
    .map((l) => JSON.parse(l));
}

const unused = async (): Promise<never> => {
  throw new Error('not used by this test');
};
const records = (create: RecordStore['create']): Pick<RecordStore, 'create' | 'get' | 'update'> => ({ create, get: unused, update: unused });

describe('per-tenant usage metrics in embedded metric format', () => {
  const metrics = () => new Metrics({ namespace: 'AgentMemory', serviceName: 'memory' });
  const input = { agent_id: 'agent', type: 'fact', title: 'Ünïcode title', body: 'body', metadata: { a: 1 } };

  test('a stored record counts one record and its bytes, under the tenant', async () => {
    const handler = createRecordHandler({
      records: records(async (tenantId, record) => ({ receipt: { id: record.id, created_at: record.created_at, tenant_id: tenantId }, replayed: false })),
      logger,
      metrics: metrics(),
    });
    const [doc, ...rest] = await emitted(() => handler(event('POST', input), lambdaContext('record')));
    expect(rest).toEqual([]);
    expect(doc).toMatchObject({ service: 'memory', tenant: TENANT, RecordsWritten: 1, BytesStored: 5 + 15 + 4 + 7 });
    expect(doc!._aws.CloudWatchMetrics[0]).toMatchObject({
      Namespace: 'AgentMemory',
      Dimensions: [['service', 'tenant']],
      Metrics: expect.arrayContaining([{ Name: 'RecordsWritten', Unit: 'Count' }, { Name: 'BytesStored', Unit: 'Bytes' }]),
    });
  });

  test('a replay counts nothing; a quota rejection counts as one', async () => {
    const replay = createRecordHandler({
      records: records(async (tenantId, record) => ({ receipt: { id: record.id, created_at: record.created_at, tenant_id: tenantId }, replayed: true })),
      logger,
      metrics: metrics(),
    });
    const replayDocs = await emitted(() => replay(event('POST', input), lambdaContext('record')));
    expect(replayDocs.filter((d) => 'RecordsWritten' in d)).toEqual([]);

    const full = createRecordHandler({
      records: records(async () => {
        throw new AppError('record_quota_exceeded', 'used up');
      }),
      logger,
      metrics: metrics(),
    });
    let status = 0;
    const [doc, total, ...rest] = await emitted(async () => {
      status = (await full(event('POST', input), lambdaContext('record'))).statusCode;
    });
    expect(status).toBe(507);
    expect(doc).toMatchObject({ tenant: TENANT, RecordQuotaRejections: 1 });
    expect(doc).not.toHaveProperty('RecordsWritten');
    // The same count without the tenant, which the 5XX alarm subtracts from API Gateway's 5XX.
    expect(total).toMatchObject({ service: 'memory', RecordQuotaRejections: 1 });
    expect(total).not.toHaveProperty('tenant');
    expect(total!._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service']]);
    expect(rest).toEqual([]);
  });

  test('a search served counts one query; a query quota rejection counts as one', async () => {
    const search: SearchIndex = { search: async () => [] };
    let allowed = true;
    const usage: UsageMeter = { countQuery: async () => allowed, list: async () => [] };
    const handler = createQueryHandler({ search, usage, logger, metrics: metrics() });
    const [served] = await emitted(() => handler(event('GET', undefined, { q: 'x' }), lambdaContext('query')));
    expect(served).toMatchObject({ tenant: TENANT, QueriesServed: 1 });
    allowed = false;
    const [rejected] = await emitted(() => handler(event('GET', undefined, { q: 'x' }), lambdaContext('query')));
    expect(rejected).toMatchObject({ tenant: TENANT, QueryQuotaRejections: 1 });
    expect(rejected).not.toHaveProperty('QueriesServed');
  });
});
