import { Match, Template } from 'aws-cdk-lib/assertions';
import { parseBedrockModelId } from '../../infra/bedrock-classifier.js';
import { FORGET_MAX_RECEIVES } from '../../infra/constructs/data.js';
import { SERVICE_FUNCTIONS } from '../../infra/lambda-bundling.js';
import { loadAwsConfig } from '../../shared/adapters/aws/config.js';
import { FORGET_SYNC_MAX } from '../../shared/adapters/aws/dynamodb/forget-jobs.js';
import { FORGET_IDS_MAX } from '../../shared/domain/schemas.js';
import { synthServiceStack as synth } from '../support/service-stack.js';

/** The logical id prefix of a function: its name without the dashes the CDK drops (`forget-worker` is `forgetworker`). */
const idOf = (name: string) => name.replaceAll('-', '');

/** The logical id of the one resource of a type whose id is `prefix` and the CDK's 8-digit hash (`classifier`, not `classify`). */
function logicalIdOf(template: Template, type: string, prefix: string): string {
  const found = Object.keys(template.findResources(type)).filter((id) => new RegExp(`^${prefix}[0-9A-F]{8}$`).test(id));
  expect(found).toHaveLength(1);
  return found[0]!;
}

/** The properties of the one service function of this name. */
function functionProps(template: Template, name: string): Record<string, any> {
  return template.findResources('AWS::Lambda::Function')[logicalIdOf(template, 'AWS::Lambda::Function', idOf(name))]!.Properties;
}

/**
 * The statements of a function's own policy other than X-Ray's, each as its actions and what they are on:
 * `table:records`, `queue:ForgetQueue`, `domain:…` (the resource's logical id without `Data`/`Search` and its hash).
 */
function grantsOf(template: Template, name: string): { on: string; actions: string[] }[] {
  const policies = Object.entries(template.findResources('AWS::IAM::Policy')).filter(([id]) => new RegExp(`^${idOf(name)}ServiceRoleDefaultPolicy[0-9A-F]{8}$`).test(id));
  expect(policies).toHaveLength(1);
  const statements = (policies[0]![1] as { Properties: { PolicyDocument: { Statement: { Action: string | string[]; Resource: unknown; Effect: string }[] } } }).Properties.PolicyDocument.Statement;
  const named = (resource: unknown): string => {
    const text = JSON.stringify(resource);
    const [, kind, id] = /"(Data|Search)([A-Za-z]+?)[0-9A-F]{8}"/.exec(text) ?? [];
    if (!kind) return text;
    if (kind === 'Search') return `domain:${text.match(/"\/[^"]*"/g)?.join('') ?? ''}`;
    return /Queue|Dlq|Failures/.test(id!) ? `queue:${id}` : id === 'CursorKey' ? `secret:${id}` : `table:${id}`;
  };
  return statements
    .filter((st) => !([] as string[]).concat(st.Action).every((a) => a.startsWith('xray:')))
    .map((st) => {
      expect(st.Effect).toBe('Allow');
      return { on: ([] as unknown[]).concat(st.Resource).map(named).join(' '), actions: ([] as string[]).concat(st.Action).sort() };
    })
    .sort((a, b) => a.on.localeCompare(b.on));
}

/** An ARN as the template writes it (`Fn::Join` of strings and `Ref`s), as one string with `<Ref>` for each reference. */
function arnText(value: unknown): unknown {
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (!join) return value;
  return join[1].map((part) => (typeof part === 'string' ? part : `<${(part as { Ref: string }).Ref}>`)).join(join[0]);
}

/** The template's statements that grant a Bedrock action, with their ARNs as text, and the policy each is in. */
function bedrockStatements(template: Template): { policy: string; Action: unknown; Resource: unknown; Condition?: unknown }[] {
  return Object.entries(template.findResources('AWS::IAM::Policy')).flatMap(([policy, p]) =>
    (p as { Properties: { PolicyDocument: { Statement: { Action: string | string[]; Resource: unknown; Condition?: Record<string, Record<string, unknown>> }[] } } }).Properties.PolicyDocument.Statement
      .filter((st) => ([] as string[]).concat(st.Action).some((a) => a.startsWith('bedrock:')))
      .map((st) => ({
        policy,
        Action: st.Action,
        Resource: ([] as unknown[]).concat(st.Resource).map(arnText),
        ...(st.Condition ? { Condition: JSON.parse(JSON.stringify(st.Condition, (_k, v: unknown) => arnText(v))) as unknown } : {}),
      })),
  );
}

/** Every IAM policy statement in the template. */
function statements(template: Template): { Action: string | string[]; Resource: unknown; Effect: string }[] {
  return Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
    (policy) => (policy as { Properties: { PolicyDocument: { Statement: never[] } } }).Properties.PolicyDocument.Statement,
  );
}

describe('the stack (dev)', () => {
  let template: Template;
  beforeAll(() => {
    ({ template } = synth('dev'));
  });

  test('cdk-nag AwsSolutions finds nothing unacknowledged (the synthesis above would have thrown)', () => {
    expect(template).toBeDefined();
  });

  test('every function runs on Node 22, ARM64, with X-Ray and the Powertools settings', () => {
    const functions = template.findResources('AWS::Lambda::Function', { Properties: { Runtime: 'nodejs22.x' } });
    // The ten service functions and the search-setup custom resource; the provider framework's own is
    // checked separately below.
    expect(Object.keys(functions).length).toBeGreaterThanOrEqual(SERVICE_FUNCTIONS.length + 1);
    for (const fn of Object.values(functions)) {
      expect(fn.Properties.Architectures).toEqual(['arm64']);
      expect(fn.Properties.TracingConfig).toEqual({ Mode: 'Active' });
      expect(fn.Properties.Environment.Variables).toMatchObject({
        POWERTOOLS_SERVICE_NAME: 'memory',
        POWERTOOLS_METRICS_NAMESPACE: 'AgentMemory',
        NODE_OPTIONS: '--enable-source-maps',
      });
    }
    for (const name of SERVICE_FUNCTIONS) {
      expect({ name, ...functionProps(template, name) }).toMatchObject({
        name,
        Runtime: 'nodejs22.x',
        Handler: 'index.handler',
        Environment: { Variables: expect.objectContaining({ OPENSEARCH_INDEX: 'memory-records', MEMORY_RECORDS_TABLE: expect.anything(), MEMORY_TENANTS_TABLE: expect.anything() }) },
      });
    }
  });

  test('the lifecycle functions: read and API-deleting functions answer within API Gateway\'s 29 s, the worker has Lambda\'s 15 minutes', () => {
    expect(functionProps(template, 'read')).toMatchObject({ MemorySize: 512, Timeout: 10 });
    expect(functionProps(template, 'forget')).toMatchObject({ MemorySize: 1024, Timeout: 28 });
    expect(functionProps(template, 'forget-worker')).toMatchObject({ MemorySize: 1024, Timeout: 900 });
    for (const name of ['read', 'forget', 'forget-worker']) {
      // Each has its own log group, with the stage's retention, like the others.
      expect(functionProps(template, name).LoggingConfig).toEqual({ LogGroup: { Ref: logicalIdOf(template, 'AWS::Logs::LogGroup', `${idOf(name)}logs`) } });
    }
  });

  test('the forget function sends jobs to the forget queue; the worker knows the queue\'s maxReceiveCount', () => {
    const queueId = logicalIdOf(template, 'AWS::SQS::Queue', 'DataForgetQueue');
    expect(functionProps(template, 'forget').Environment.Variables.FORGET_QUEUE_URL).toEqual({ Ref: queueId });
    const maxReceiveCount = template.findResources('AWS::SQS::Queue')[queueId]!.Properties.RedrivePolicy.maxReceiveCount;
    expect(maxReceiveCount).toBe(FORGET_MAX_RECEIVES);
    expect(FORGET_MAX_RECEIVES).toBe(3);
    const variables = functionProps(template, 'forget-worker').Environment.Variables;
    expect(loadAwsConfig({ FORGET_MAX_RECEIVES: variables.FORGET_MAX_RECEIVES }).forget.maxReceives).toBe(maxReceiveCount);
  });

  test('the forget queue: SQS-managed encryption, TLS only, a DLQ after 3 deliveries, and a visibility six times the worker\'s timeout', () => {
    const queueId = logicalIdOf(template, 'AWS::SQS::Queue', 'DataForgetQueue');
    const dlqId = logicalIdOf(template, 'AWS::SQS::Queue', 'DataForgetDlq');
    const queues = template.findResources('AWS::SQS::Queue');
    expect(queues[queueId]!.Properties).toEqual({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 4 * 24 * 3600,
      VisibilityTimeout: 6 * functionProps(template, 'forget-worker').Timeout,
      RedrivePolicy: { maxReceiveCount: 3, deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] } },
    });
    expect(queues[dlqId]!.Properties).toEqual({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
    // Encrypted like the classification queue and its DLQ.
    const classification = queues[logicalIdOf(template, 'AWS::SQS::Queue', 'DataClassificationQueue')]!.Properties;
    expect(classification.SqsManagedSseEnabled).toBe(true);
    for (const id of [queueId, dlqId]) {
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id }],
        PolicyDocument: {
          Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Action: 'sqs:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
        },
      });
    }
  });

  test('the forget worker takes one job per invocation from the forget queue and reports a failed one alone', () => {
    const workerRef = { Ref: logicalIdOf(template, 'AWS::Lambda::Function', 'forgetworker') };
    const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')).filter(
      (m) => JSON.stringify(m.Properties.FunctionName) === JSON.stringify(workerRef),
    );
    expect(mappings.map((m) => m.Properties)).toEqual([
      {
        FunctionName: workerRef,
        EventSourceArn: { 'Fn::GetAtt': [logicalIdOf(template, 'AWS::SQS::Queue', 'DataForgetQueue'), 'Arn'] },
        BatchSize: 1,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      },
    ]);
  });

  test('the forget alarms watch this stack\'s forget DLQ and forget worker', () => {
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties);
    const dlq = alarms.find((a) => a.AlarmName === 'memory-dev-forget-dlq')!;
    expect(dlq.Dimensions).toEqual([{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalIdOf(template, 'AWS::SQS::Queue', 'DataForgetDlq'), 'QueueName'] } }]);
    const errors = alarms.find((a) => a.AlarmName === 'memory-dev-forget-worker-errors')!;
    expect(JSON.stringify(errors.Metrics)).toContain(JSON.stringify({ Ref: logicalIdOf(template, 'AWS::Lambda::Function', 'forgetworker') }));
    template.hasResourceProperties('AWS::Logs::MetricFilter', {
      LogGroupName: { Ref: logicalIdOf(template, 'AWS::Logs::LogGroup', 'forgetworkerlogs') },
      MetricTransformations: [Match.objectLike({ MetricName: 'ForgetJobFailures' })],
    });
    // Both notify the alarm topic, as every alarm does.
    for (const alarm of [dlq, errors]) expect(alarm.AlarmActions).toEqual([{ Ref: logicalIdOf(template, 'AWS::SNS::Topic', 'ObservabilityAlarmTopic') }]);
  });

  test('the records table streams both images; every table has PITR, encryption and on-demand billing', () => {
    const tables = Object.values(template.findResources('AWS::DynamoDB::GlobalTable'));
    expect(tables).toHaveLength(4);
    for (const table of tables) {
      expect(table.Properties.BillingMode).toBe('PAY_PER_REQUEST');
      expect(table.Properties.SSESpecification).toMatchObject({ SSEEnabled: true, SSEType: 'KMS' });
      for (const replica of table.Properties.Replicas) {
        expect(replica.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
      }
    }
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'id', KeyType: 'RANGE' }],
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
    });
    // Idempotency keys expire after 24 h, and ended forget jobs in the tenants table after 30 days.
    const withTtl = tables.filter((table) => table.Properties.TimeToLiveSpecification).map((table) => table.Properties.KeySchema.map((k: { AttributeName: string }) => k.AttributeName));
    expect(withTtl).toEqual(expect.arrayContaining([['pk'], ['pk', 'sk']]));
    expect(withTtl).toHaveLength(2);
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
      TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
    });
  });

  test('the stream mapping reports partial failures, bisects, retries 5 times, then sends to the failure queue', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: Match.anyValue(),
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 100,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 5,
      DestinationConfig: { OnFailure: { Destination: Match.anyValue() } },
    });
  });

  test('the SQS mapping reports batch item failures; the queue has a DLQ after 5 receives and a fitting visibility', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    template.hasResourceProperties('AWS::SQS::Queue', {
      VisibilityTimeout: 180,
      RedrivePolicy: { maxReceiveCount: 5, deadLetterTargetArn: Match.anyValue() },
      SqsManagedSseEnabled: true,
    });
  });

  test('the OpenSearch domain is encrypted at rest and between nodes, HTTPS only, and open to named roles only', () => {
    template.hasResourceProperties('AWS::OpenSearchService::Domain', {
      EncryptionAtRestOptions: { Enabled: true },
      NodeToNodeEncryptionOptions: { Enabled: true },
      DomainEndpointOptions: { EnforceHTTPS: true, TLSSecurityPolicy: 'Policy-Min-TLS-1-2-2019-07' },
      ClusterConfig: Match.objectLike({ InstanceType: 't3.medium.search', InstanceCount: 1, ZoneAwarenessEnabled: false }),
    });
    const [domain] = Object.values(template.findResources('AWS::OpenSearchService::Domain'));
    const [statement] = domain!.Properties.AccessPolicies.Statement;
    expect(statement.Principal.AWS.length).toBeGreaterThanOrEqual(3);
    expect(JSON.stringify(statement.Principal)).not.toContain('"*"');
    template.resourceCountIs('Custom::MemoryIndexTemplate', 1);
  });

  test('least privilege: no wildcard action on data, and each function gets only what its code does', () => {
    for (const s of statements(template)) {
      const actions = ([] as string[]).concat(s.Action);
      for (const action of actions) {
        expect(action).not.toBe('*');
        expect(action).not.toMatch(/^(dynamodb|es|sqs):\*$/);
      }
    }
    // The data actions each function's own policy grants, by service.
    const dataActions = (fn: string) =>
      Object.entries(template.findResources('AWS::IAM::Policy'))
        .filter(([id]) => id.startsWith(`${fn}ServiceRoleDefaultPolicy`))
        .flatMap(([, p]) => (p as { Properties: { PolicyDocument: { Statement: { Action: string | string[] }[] } } }).Properties.PolicyDocument.Statement)
        .flatMap((st) => ([] as string[]).concat(st.Action))
        .filter((a) => /^(dynamodb|es|sqs):/.test(a) && !a.startsWith('dynamodb:DescribeStream') && !a.startsWith('dynamodb:GetRecords') && !a.startsWith('dynamodb:GetShardIterator') && !a.startsWith('dynamodb:ListStreams'))
        .sort();
    const unique = (xs: string[]) => [...new Set(xs)];
    expect(unique(dataActions('record'))).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
    expect(unique(dataActions('query'))).toEqual(['dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:UpdateItem', 'es:ESHttpGet', 'es:ESHttpPost']);
    expect(unique(dataActions('authorizer'))).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    expect(unique(dataActions('usage'))).toEqual(['dynamodb:GetItem']);
    expect(unique(dataActions('classify'))).toEqual([]);
    expect(unique(dataActions('indexer'))).toEqual(
      expect.arrayContaining(['es:ESHttpPost', 'es:ESHttpPut', 'sqs:SendMessage']),
    );
    expect(dataActions('indexer').filter((a) => a.startsWith('dynamodb:'))).toEqual([]);
    expect(unique(dataActions('classifier')).filter((a) => a.startsWith('dynamodb:'))).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
  });

  test('record: puts records, updates them in place and marks what a write supersedes (UpdateItem), reads one first (GetItem) with the running forget jobs (Query)', () => {
    expect(grantsOf(template, 'record')).toEqual([
      { on: 'table:idempotency', actions: ['dynamodb:GetItem', 'dynamodb:PutItem'] },
      { on: 'table:records', actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'] },
      { on: 'table:tenants', actions: ['dynamodb:Query'] },
      { on: 'table:usage', actions: ['dynamodb:UpdateItem'] },
    ]);
  });

  test('the indexer is deployed after the index setup, so a field the mapping gains is there before a document carries it', () => {
    const indexer = template.findResources('AWS::Lambda::Function')[logicalIdOf(template, 'AWS::Lambda::Function', idOf('indexer'))]!;
    const setup = Object.keys(template.findResources('Custom::MemoryIndexTemplate'));
    expect(setup).toHaveLength(1);
    expect(indexer.DependsOn).toEqual(expect.arrayContaining([setup[0]]));
  });

  test('read: GetItem and Query on the records table, Query on the tenants table (forget jobs), the cursor key, nothing else', () => {
    expect(grantsOf(template, 'read')).toEqual([
      { on: 'secret:CursorKey', actions: ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'] },
      { on: 'table:records', actions: ['dynamodb:GetItem', 'dynamodb:Query'] },
      { on: 'table:tenants', actions: ['dynamodb:Query'] },
    ]);
  });

  test('the cursor key: a generated secret of 64 letters and digits, removed with a dev stack; the read function has its ARN', () => {
    const secretId = logicalIdOf(template, 'AWS::SecretsManager::Secret', 'DataCursorKey');
    const secret = template.findResources('AWS::SecretsManager::Secret')[secretId]!;
    expect(secret.Properties.GenerateSecretString).toEqual({ PasswordLength: 64, ExcludePunctuation: true, IncludeSpace: false });
    expect(secret.DeletionPolicy).toBe('Delete');
    const variables = functionProps(template, 'read').Environment.Variables;
    expect(variables.MEMORY_CURSOR_SECRET_ARN).toEqual({ Ref: secretId });
    // The config schema takes it: an ARN of a secret, as the Ref resolves to.
    const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:DataCursorKey-AbCdEf';
    expect(loadAwsConfig({ MEMORY_CURSOR_SECRET_ARN: arn }).cursorSecretArn).toBe(arn);
    expect(() => loadAwsConfig({ MEMORY_CURSOR_SECRET_ARN: 'memory-cursor-key' })).toThrow(/MEMORY_CURSOR_SECRET_ARN: must be the ARN of a Secrets Manager secret/);
  });

  test('only the read function knows where the cursor key is, and only it may read it', () => {
    const secretId = logicalIdOf(template, 'AWS::SecretsManager::Secret', 'DataCursorKey');
    const knowing = SERVICE_FUNCTIONS.filter((name) => 'MEMORY_CURSOR_SECRET_ARN' in functionProps(template, name).Environment.Variables);
    expect(knowing).toEqual(['read']);
    const readers = Object.entries(template.findResources('AWS::IAM::Policy'))
      .filter(([, p]) => JSON.stringify(p).includes('secretsmanager:') || JSON.stringify(p).includes(secretId))
      .map(([id]) => id);
    expect(readers).toEqual([expect.stringMatching(/^readServiceRoleDefaultPolicy[0-9A-F]{8}$/)]);
    // Nor may anyone else by the secret's own policy.
    template.resourceCountIs('AWS::SecretsManager::ResourcePolicy', 0);
  });

  test('usage: GetItem on the usage table, nothing else (it writes no counter and reads no record)', () => {
    expect(grantsOf(template, 'usage')).toEqual([{ on: 'table:usage', actions: ['dynamodb:GetItem'] }]);
  });

  test('usage: answers like a read, 512 MB and 10 s, with its own log group and the usage table\'s name', () => {
    const props = functionProps(template, 'usage');
    expect(props).toMatchObject({ MemorySize: 512, Timeout: 10 });
    expect(props.LoggingConfig).toEqual({ LogGroup: { Ref: logicalIdOf(template, 'AWS::Logs::LogGroup', 'usagelogs') } });
    expect(props.Environment.Variables.MEMORY_USAGE_TABLE).toEqual({ Ref: logicalIdOf(template, 'AWS::DynamoDB::GlobalTable', 'Datausage') });
  });

  test('forget: DeleteItem, GetItem, Query and BatchGetItem on records; PutItem, GetItem and Query on tenants; SendMessage on the forget queue', () => {
    expect(grantsOf(template, 'forget')).toEqual([
      { on: 'queue:ForgetQueue', actions: ['sqs:SendMessage'] },
      { on: 'table:records', actions: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:Query'] },
      { on: 'table:tenants', actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query'] },
    ]);
  });

  test('forget-worker: Query and DeleteItem on records; GetItem, UpdateItem and DeleteItem (a job\'s running item) on tenants; its queue\'s event source mapping actions', () => {
    expect(grantsOf(template, 'forget-worker')).toEqual([
      {
        on: 'queue:ForgetQueue',
        actions: ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'],
      },
      { on: 'table:records', actions: ['dynamodb:DeleteItem', 'dynamodb:Query'] },
      { on: 'table:tenants', actions: ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem'] },
    ]);
    // Why no BatchGetItem: a forget that names ids names at most FORGET_IDS_MAX, and so many run within the
    // request; only a forget by selectors becomes a job, and the worker queries for its records.
    expect(FORGET_IDS_MAX).toBeLessThanOrEqual(FORGET_SYNC_MAX);
  });

  test('query: its search hits checked against records (BatchGetItem) and the tenant\'s forget jobs (Query), besides its counter and search', () => {
    expect(grantsOf(template, 'query')).toEqual([
      { on: expect.stringMatching(/^domain:"\/memory-records\*\/_search"$/), actions: ['es:ESHttpGet', 'es:ESHttpPost'] },
      { on: 'table:records', actions: ['dynamodb:BatchGetItem'] },
      { on: 'table:tenants', actions: ['dynamodb:Query'] },
      { on: 'table:usage', actions: ['dynamodb:UpdateItem'] },
    ]);
  });

  test('only the forget functions may delete records', () => {
    const deleters = SERVICE_FUNCTIONS.filter((name) => grantsOf(template, name).some((g) => g.on === 'table:records' && g.actions.includes('dynamodb:DeleteItem')));
    expect(deleters).toEqual(['forget', 'forget-worker']);
  });

  test('outputs: the API URL, the table names, and the admin CLI settings', () => {
    const outputs = Object.keys(template.findOutputs('*'));
    expect(outputs).toEqual(
      expect.arrayContaining(['ApiUrl', 'RecordsTable', 'TenantsTable', 'UsageTable', 'IdempotencyTable', 'ApiId', 'ApiStage', 'DefaultUsagePlanId', 'AdminCli']),
    );
  });
});

describe('the stack (prod)', () => {
  let template: Template;
  beforeAll(() => {
    ({ template } = synth('prod', { alarmEmail: 'oncall@example.com' }));
  });

  test('-c alarmEmail subscribes the address to the alarm topic', () => {
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'oncall@example.com' });
  });

  test('tables are protected and kept; the domain spans three zones with dedicated masters', () => {
    for (const table of Object.values(template.findResources('AWS::DynamoDB::GlobalTable'))) {
      expect(table.DeletionPolicy).toBe('Retain');
      for (const replica of table.Properties.Replicas) expect(replica.DeletionProtectionEnabled).toBe(true);
    }
    // The cursor key is kept with them: a stack removed and deployed again over the kept tables keeps its cursors.
    for (const secret of Object.values(template.findResources('AWS::SecretsManager::Secret'))) expect(secret.DeletionPolicy).toBe('Retain');
    template.hasResourceProperties('AWS::OpenSearchService::Domain', {
      ClusterConfig: Match.objectLike({
        InstanceType: 'r7g.large.search',
        InstanceCount: 3,
        ZoneAwarenessEnabled: true,
        ZoneAwarenessConfig: { AvailabilityZoneCount: 3 },
        DedicatedMasterEnabled: true,
        DedicatedMasterCount: 3,
      }),
    });
  });
});

describe('the Bedrock classifier (-c bedrockModelId)', () => {
  const HAIKU = 'anthropic.claude-3-haiku-20240307-v1:0';
  const BEDROCK_SETTINGS = ['MEMORY_CLASSIFIER', 'BEDROCK_MODEL_ID', 'BEDROCK_TIMEOUT_MS'];

  test('without it: no Bedrock permission anywhere, and no function has the settings', () => {
    const { template } = synth('dev');
    expect(bedrockStatements(template)).toEqual([]);
    for (const fn of Object.values(template.findResources('AWS::Lambda::Function'))) {
      for (const name of BEDROCK_SETTINGS) expect(fn.Properties.Environment?.Variables ?? {}).not.toHaveProperty(name);
    }
  });

  test('a foundation model id: the worker alone gets the settings and InvokeModel on exactly that model in the stack region', () => {
    const { template } = synth('dev', { bedrockModelId: HAIKU });
    const worker = functionProps(template, 'classifier');
    const variables = worker.Environment.Variables;
    expect(variables).toMatchObject({ MEMORY_CLASSIFIER: 'bedrock', BEDROCK_MODEL_ID: HAIKU, BEDROCK_TIMEOUT_MS: '3000' });
    for (const name of SERVICE_FUNCTIONS.filter((n) => n !== 'classifier')) {
      for (const setting of BEDROCK_SETTINGS) expect(functionProps(template, name).Environment.Variables).not.toHaveProperty(setting);
    }
    // The worker's own configuration accepts what the stack sets.
    expect(loadAwsConfig(Object.fromEntries(BEDROCK_SETTINGS.map((k) => [k, variables[k]]))).bedrock).toEqual({ modelId: HAIKU, timeoutMs: 3000 });

    const statements = bedrockStatements(template);
    expect(statements).toEqual([
      {
        policy: expect.stringMatching(/^classifierServiceRoleDefaultPolicy/),
        Action: 'bedrock:InvokeModel',
        Resource: [`arn:<AWS::Partition>:bedrock:eu-west-1::foundation-model/${HAIKU}`],
      },
    ]);
  });

  test('a cross-region inference profile: the profile, and its model in any region but only through the profile', () => {
    const { template } = synth('prod', { bedrockModelId: `us.${HAIKU}` });
    expect(functionProps(template, 'classifier').Environment.Variables).toMatchObject({ MEMORY_CLASSIFIER: 'bedrock', BEDROCK_MODEL_ID: `us.${HAIKU}` });
    const profileArn = `arn:<AWS::Partition>:bedrock:eu-west-1:123456789012:inference-profile/us.${HAIKU}`;
    const statements = bedrockStatements(template);
    expect(statements).toEqual([
      { policy: expect.stringMatching(/^classifierServiceRoleDefaultPolicy/), Action: 'bedrock:InvokeModel', Resource: [profileArn] },
      {
        policy: expect.stringMatching(/^classifierServiceRoleDefaultPolicy/),
        Action: 'bedrock:InvokeModel',
        Resource: [`arn:<AWS::Partition>:bedrock:*::foundation-model/${HAIKU}`],
        Condition: { StringEquals: { 'bedrock:InferenceProfileArn': profileArn } },
      },
    ]);
  });

  test('the Bedrock deadline fits the worker: a third of its Lambda timeout at most, and the queue visibility is unchanged', () => {
    const { template } = synth('dev', { bedrockModelId: HAIKU });
    const worker = functionProps(template, 'classifier');
    expect(worker.Timeout).toBe(30);
    expect(Number(worker.Environment.Variables.BEDROCK_TIMEOUT_MS)).toBeLessThanOrEqual((worker.Timeout * 1000) / 3);
    template.hasResourceProperties('AWS::SQS::Queue', { VisibilityTimeout: 180, RedrivePolicy: Match.anyValue() });
  });

  test('model ids: a geography prefix makes a cross-region profile; an ARN or a bare name is refused with what to give', () => {
    expect(parseBedrockModelId(HAIKU)).toEqual({ id: HAIKU, foundationModelId: HAIKU, crossRegion: false });
    expect(parseBedrockModelId(`eu.${HAIKU}`)).toEqual({ id: `eu.${HAIKU}`, foundationModelId: HAIKU, crossRegion: true });
    expect(parseBedrockModelId(`global.${HAIKU}`)).toMatchObject({ foundationModelId: HAIKU, crossRegion: true });
    expect(parseBedrockModelId('amazon.nova-micro-v1:0')).toMatchObject({ crossRegion: false });
    for (const bad of [`arn:aws:bedrock:eu-west-1::foundation-model/${HAIKU}`, 'haiku', 'anthropic claude']) {
      expect(() => parseBedrockModelId(bad)).toThrow(/is not a Bedrock model id: give a foundation model id .* or a cross-region inference profile id/);
    }
    expect(() => synth('dev', { bedrockModelId: 'haiku' })).toThrow(/bedrockModelId "haiku" is not a Bedrock model id/);
  });
});
