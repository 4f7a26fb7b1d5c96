import { Arn, CustomResource, Lazy, Stack, Validations } from 'aws-cdk-lib';
import { ArnPrincipal, Effect, PolicyDocument, PolicyStatement, type IRole } from 'aws-cdk-lib/aws-iam';
import { CfnDomain, Domain, EngineVersion, TLSSecurityPolicy } from 'aws-cdk-lib/aws-opensearchservice';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Provider } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { RECORDS_TEMPLATE_VERSION } from '../../shared/adapters/aws/opensearch/mapping.js';
import { RANKING } from '../../shared/domain/rank.js';
import type { StageConfig } from '../stage.js';
import { MemoryFunction } from './functions.js';

export interface MemorySearchProps {
  stage: StageConfig;
  /** The index alias the functions use (OPENSEARCH_INDEX). */
  alias: string;
  /** The settings every function reads; the setup function gets them too. */
  environment: Record<string, string>;
}

/** The HTTP actions each kind of caller needs on the records indices, and nothing else. */
export const SEARCH_ACTIONS = {
  read: ['es:ESHttpGet', 'es:ESHttpPost'],
  write: ['es:ESHttpPut', 'es:ESHttpPost'],
  setup: ['es:ESHttpGet', 'es:ESHttpHead', 'es:ESHttpPut', 'es:ESHttpPost'],
} as const;

/**
 * The OpenSearch domain: encrypted at rest and between nodes, HTTPS only with TLS 1.2, sized per stage,
 * and open to the IAM roles of this stack's functions only, by a resource policy that names them. A
 * custom resource puts the index template and the first index at deploy time.
 */
export class MemorySearch extends Construct {
  readonly domain: Domain;
  readonly endpoint: string;
  /**
   * The deploy-time setup of the index template and the mapping of the indices behind the alias: what writes
   * documents depends on it, so that a field the code adds is mapped before a document carries it.
   */
  readonly indexSetup: CustomResource;
  private readonly principals: IRole[] = [];

  constructor(scope: Construct, id: string, props: MemorySearchProps) {
    super(scope, id);
    const { stage } = props;
    const os = stage.opensearch;
    const slowLogs = new LogGroup(this, 'SlowLogs', { retention: stage.logRetention, removalPolicy: stage.removalPolicy });
    const appLogs = new LogGroup(this, 'AppLogs', { retention: stage.logRetention, removalPolicy: stage.removalPolicy });
    const domainName = `memory-${stage.name}`;
    this.domain = new Domain(this, 'Domain', {
      domainName,
      version: EngineVersion.OPENSEARCH_2_19,
      capacity: {
        dataNodeInstanceType: os.instanceType,
        dataNodes: os.instanceCount,
        ...(os.masterNodes ? { masterNodeInstanceType: os.masterNodes.instanceType, masterNodes: os.masterNodes.count } : {}),
        multiAzWithStandbyEnabled: false,
      },
      ebs: { volumeSize: os.volumeGiB },
      zoneAwareness: os.availabilityZones > 1 ? { enabled: true, availabilityZoneCount: os.availabilityZones } : { enabled: false },
      encryptionAtRest: { enabled: true },
      nodeToNodeEncryption: true,
      enforceHttps: true,
      tlsSecurityPolicy: TLSSecurityPolicy.TLS_1_2,
      logging: {
        slowSearchLogEnabled: true,
        slowSearchLogGroup: slowLogs,
        slowIndexLogEnabled: true,
        slowIndexLogGroup: slowLogs,
        appLogEnabled: true,
        appLogGroup: appLogs,
      },
      removalPolicy: stage.removalPolicy,
    });
    this.endpoint = `https://${this.domain.domainEndpoint}`;
    // The domain's log resource policy is put by a CDK singleton function (AwsCustomResource) at stack level.
    const logPolicyFunction = Stack.of(this).node.tryFindChild('AWS679f53fac002430cb0da5b7982bd2287');
    if (logPolicyFunction) {
      Validations.of(logPolicyFunction).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason: 'The CDK singleton that puts the domain\'s log resource policy writes its own logs, nothing more.',
      });
    }
    Validations.of(this.domain).acknowledge(
      {
        id: 'AwsSolutions-OS1',
        reason: 'A public endpoint with IAM (SigV4) authentication and a resource policy naming only this stack\'s roles: Lambdas outside a VPC need no NAT gateways, and no request is accepted unsigned.',
      },
      {
        id: 'AwsSolutions-OS3',
        reason: 'Access is by IAM principal, not by IP: the callers are Lambda functions, whose addresses are not fixed.',
      },
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'The CDK-made policy that lets OpenSearch write its slow and application logs to CloudWatch Logs: logs:PutResourcePolicy has no resource narrower than *.',
      },
    );
    if (!os.masterNodes) {
      Validations.of(this.domain).acknowledge({ id: 'AwsSolutions-OS4', reason: 'Dev stage: one data node, no dedicated masters, to keep a dev stack cheap; prod has three.' });
    }
    if (os.availabilityZones === 1) {
      Validations.of(this.domain).acknowledge({ id: 'AwsSolutions-OS7', reason: 'Dev stage: a single node in one zone; prod spreads over three zones.' });
    }

    // The resource policy names the roles, which do not depend on the domain (their grants are separate
    // IAM policies), so it can sit on the domain itself: no cycle, and no extra custom resource. It refers
    // to the domain by its fixed name, since a resource cannot refer to its own ARN.
    const cfn = this.domain.node.defaultChild as CfnDomain;
    cfn.accessPolicies = Lazy.any({
      produce: () =>
        new PolicyDocument({
          statements: [
            new PolicyStatement({
              effect: Effect.ALLOW,
              principals: this.principals.map((role) => new ArnPrincipal(role.roleArn)),
              actions: ['es:ESHttp*'],
              resources: [Arn.format({ service: 'es', resource: 'domain', resourceName: `${domainName}/*` }, Stack.of(this))],
            }),
          ],
        }).toJSON(),
    });

    const setup = new MemoryFunction(this, 'search-setup', {
      stage,
      environment: { ...props.environment, OPENSEARCH_ENDPOINT: this.endpoint, OPENSEARCH_INDEX: props.alias },
    });
    this.grant(setup.role!, SEARCH_ACTIONS.setup, [`${props.alias}*`, '_index_template/*', '_alias/*']);
    Validations.of(setup).acknowledge(
      ...[`${props.alias}*`, '_index_template/*', '_alias/*'].map((path) => ({
        id: `AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(this.domain.node.defaultChild as CfnDomain)}.Arn>/${path}]`,
        reason: 'Deploy-time setup of the records index template, its indices (which roll over behind the alias) and the alias; nothing else on the domain.',
      })),
    );
    const provider = new Provider(this, 'SetupProvider', { onEventHandler: setup });
    Validations.of(provider).acknowledge(
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason: 'The CDK custom resource framework function writes its own logs, nothing more.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(setup.node.defaultChild as never)}.Arn>:*]`,
        reason: 'The CDK custom resource framework may invoke any version of the setup function it drives, and only that function.',
      },
      { id: 'AwsSolutions-L1', reason: 'The CDK custom resource framework picks its own runtime.' },
    );
    this.indexSetup = new CustomResource(this, 'IndexTemplate', {
      serviceToken: provider.serviceToken,
      resourceType: 'Custom::MemoryIndexTemplate',
      // A new template version, or new ranking parameters in it, makes CloudFormation run the update, which
      // puts the new template.
      properties: { alias: props.alias, templateVersion: RECORDS_TEMPLATE_VERSION, k1: String(RANKING.k1), b: String(RANKING.b) },
    });
  }

  /** Lets a role make these HTTP calls on these paths of the domain, and adds it to the domain's policy. */
  grant(role: IRole, actions: readonly string[], paths: string[]): void {
    role.addToPrincipalPolicy(
      new PolicyStatement({ actions: [...actions], resources: paths.map((path) => `${this.domain.domainArn}/${path}`) }),
    );
    this.principals.push(role);
    const domainRef = `<${Stack.of(this).getLogicalId(this.domain.node.defaultChild as CfnDomain)}.Arn>`;
    Validations.of(role).acknowledge(
      ...paths
        .filter((path) => path.includes('*'))
        .map((path) => ({
          id: `AwsSolutions-IAM5[Resource::${domainRef}/${path}]`,
          reason: 'The records indices roll over behind one alias (memory-records-000001, …), so the path names their prefix; the actions are only the HTTP verbs this function uses.',
        })),
    );
  }
}
