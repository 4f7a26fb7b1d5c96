import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDbRecordStore } from '../../shared/adapters/aws/dynamodb/record-store.js';

const tables = { records: 'records', usage: 'usage', idempotency: 'idempotency', tenants: 'tenants' };

test("the classification worker's read is one GetItem; the API's get also reads the tenant's forget jobs", async () => {
  const db = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
  const mock = mockClient(db);
  mock.on(GetCommand).resolves({});
  mock.on(QueryCommand).resolves({ Items: [] });
  const store = new DynamoDbRecordStore(db, tables);
  expect(await store.stored('t', '01900000-0000-7000-8000-000000000000')).toBeNull();
  expect(mock.commandCalls(GetCommand)).toHaveLength(1);
  // The worker's IAM allows GetItem and UpdateItem on the records table only: no Query on the tenants table.
  expect(mock.commandCalls(QueryCommand)).toHaveLength(0);
  expect(await store.get('t', '01900000-0000-7000-8000-000000000000')).toBeNull();
  expect(mock.commandCalls(QueryCommand).map((c) => c.args[0].input.TableName)).toEqual(['tenants']);
  mock.restore();
});
