import { App, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { LAMBDA_FUNCTIONS } from '../../infra/lambda-bundling.js';
import { MemoryServiceStack } from '../../infra/memory-service-stack.js';

/**
 * The whole stack, synthesized as `cdk synth` does but without bundling (the bundles have their own test),
 * with cdk-nag's AwsSolutions rules as a validation plugin: a finding that is not acknowledged with a
 * reason fails the synthesis.
 */
function synth(stage: 'dev' | 'prod', context: Record<string, string> = {}): { template: Template; stack: MemoryServiceStack } {
  const app = new App({ context: { stage, 'aws:cdk:bundling-stacks': [], ...context } });
  const stack = new MemoryServiceStack(app, `MemoryService-${stage}`, { stage, env: { account: '123456789012', region: 'eu-west-1' } });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  app.synth();
  return { template: Template.fromStack(stack), stack };
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
    // The six service functions and the search-setup custom resource; the provider framework's own is
    // checked separately below.
    expect(Object.keys(functions).length).toBeGreaterThanOrEqual(LAMBDA_FUNCTIONS.length + 1);
    for (const fn of Object.values(functions)) {
      expect(fn.Properties.Architectures).toEqual(['arm64']);
      expect(fn.Properties.TracingConfig).toEqual({ Mode: 'Active' });
      expect(fn.Properties.Environment.Variables).toMatchObject({
        POWERTOOLS_SERVICE_NAME: 'memory',
        POWERTOOLS_METRICS_NAMESPACE: 'AgentMemory',
        NODE_OPTIONS: '--enable-source-maps',
      });
    }
    for (const name of LAMBDA_FUNCTIONS) {
      template.hasResourceProperties('AWS::Lambda::Function', {
        Runtime: 'nodejs22.x',
        Handler: 'index.handler',
        Environment: { Variables: Match.objectLike({ OPENSEARCH_INDEX: 'memory-records' }) },
      });
      expect(name).toBeTruthy();
    }
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
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
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
    expect(unique(dataActions('record'))).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
    expect(unique(dataActions('query'))).toEqual(['dynamodb:UpdateItem', 'es:ESHttpGet', 'es:ESHttpPost']);
    expect(unique(dataActions('authorizer'))).toEqual(['dynamodb:GetItem']);
    expect(unique(dataActions('classify'))).toEqual([]);
    expect(unique(dataActions('indexer'))).toEqual(
      expect.arrayContaining(['es:ESHttpPost', 'es:ESHttpPut', 'sqs:SendMessage']),
    );
    expect(dataActions('indexer').filter((a) => a.startsWith('dynamodb:'))).toEqual([]);
    expect(unique(dataActions('classifier')).filter((a) => a.startsWith('dynamodb:'))).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
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
