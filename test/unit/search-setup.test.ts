import { Logger } from '@aws-lambda-powertools/logger';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { createSearchSetupHandler } from '../../functions/search-setup/handler.js';
import { openSearchClient } from '../../shared/adapters/aws/opensearch/client.js';
import { ensureRecordsIndex, RECORD_FIELDS_SINCE_3, RECORDS_TEMPLATE_VERSION, recordsIndexTemplate } from '../../shared/adapters/aws/opensearch/mapping.js';
import { FakeOpenSearch } from '../support/fake-opensearch.js';

const event = (RequestType: 'Create' | 'Update' | 'Delete') => ({ RequestType }) as unknown as CloudFormationCustomResourceEvent;

describe('the search-setup custom resource', () => {
  let cluster: FakeOpenSearch;
  let handler: ReturnType<typeof createSearchSetupHandler>;
  let aliasExists: boolean;

  beforeEach(async () => {
    cluster = new FakeOpenSearch();
    aliasExists = false;
    cluster.reply = (r) => (r.method === 'HEAD' ? { status: aliasExists ? 200 : 404, body: {} } : { status: 200, body: { acknowledged: true } });
    const node = await cluster.start();
    const client = openSearchClient({ node, sigv4: false });
    handler = createSearchSetupHandler({
      ensureIndex: (firstIndex) => ensureRecordsIndex(client, 'memory-records', firstIndex),
      templateVersion: RECORDS_TEMPLATE_VERSION,
      alias: 'memory-records',
      logger: new Logger({ logLevel: 'SILENT' }),
    });
  });
  afterEach(() => cluster.stop());

  test('create puts the template, then the first index behind the write alias', async () => {
    const result = await handler(event('Create'));
    expect(cluster.received.map((r) => `${r.method} ${r.path}`)).toEqual([
      expect.stringMatching(/^(PUT|POST) \/_index_template\/memory-records$/),
      'HEAD /_alias/memory-records',
      'PUT /memory-records-000001',
    ]);
    expect(cluster.received[0]!.body).toEqual(recordsIndexTemplate('memory-records-*'));
    expect(cluster.received[2]!.body).toEqual({ aliases: { 'memory-records': { is_write_index: true } } });
    expect(result).toEqual({
      PhysicalResourceId: 'memory-records-template',
      Data: { alias: 'memory-records', index: 'memory-records-000001', templateVersion: RECORDS_TEMPLATE_VERSION },
    });
  });

  test('an update with the alias in place puts the template, adds the fields of version 3 to the indices behind the alias, and creates no index', async () => {
    aliasExists = true;
    await handler(event('Update'));
    expect(cluster.received.map((r) => r.method + ' ' + r.path)).toEqual([
      expect.stringMatching(/_index_template\/memory-records$/),
      'HEAD /_alias/memory-records',
      expect.stringMatching(/^(PUT|POST) \/memory-records\/_mapping$/),
    ]);
    expect(cluster.received[2]!.body).toEqual({ properties: RECORD_FIELDS_SINCE_3 });
    // Exactly the fields the template maps for them: what an index made from the template has.
    const mapped = recordsIndexTemplate('memory-records-*').template!.mappings!.properties!;
    for (const [field, mapping] of Object.entries(RECORD_FIELDS_SINCE_3)) expect(mapped[field]).toEqual(mapping);
  });

  test('delete leaves the data alone', async () => {
    await handler(event('Delete'));
    expect(cluster.received).toEqual([]);
  });
});
