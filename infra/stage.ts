import { RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';

/** What differs between a dev and a prod deployment; chosen with `cdk deploy -c stage=dev|prod`. */
export interface StageConfig {
  name: 'dev' | 'prod';
  /** Tables and the domain survive `cdk destroy` in prod; a dev stack cleans up after itself. */
  removalPolicy: RemovalPolicy;
  /** DynamoDB deletion protection (prod only). */
  deletionProtection: boolean;
  logRetention: RetentionDays;
  /** The rate limit of keys that have no limit of their own, as API Gateway's default usage plan applies it. */
  defaultRate: number;
  defaultBurst: number;
  /** Default monthly quotas of new tenants (the admin CLI reads them from the stack's outputs). */
  defaultRecordQuota: number;
  defaultQueryQuota: number;
  opensearch: {
    instanceType: string;
    instanceCount: number;
    /** Spread the data nodes over this many availability zones; 1 turns zone awareness off. */
    availabilityZones: 1 | 2 | 3;
    volumeGiB: number;
    /** Dedicated master nodes (prod): they keep the cluster stable while data nodes are busy. */
    masterNodes: { instanceType: string; count: number } | null;
  };
}

const STAGES: Record<StageConfig['name'], StageConfig> = {
  dev: {
    name: 'dev',
    removalPolicy: RemovalPolicy.DESTROY,
    deletionProtection: false,
    logRetention: RetentionDays.ONE_WEEK,
    defaultRate: 20,
    defaultBurst: 40,
    defaultRecordQuota: 100_000,
    defaultQueryQuota: 1_000_000,
    // The smallest instance that runs OpenSearch 2.x with the english analyzer comfortably; one node.
    opensearch: { instanceType: 't3.medium.search', instanceCount: 1, availabilityZones: 1, volumeGiB: 20, masterNodes: null },
  },
  prod: {
    name: 'prod',
    removalPolicy: RemovalPolicy.RETAIN,
    deletionProtection: true,
    logRetention: RetentionDays.THREE_MONTHS,
    defaultRate: 20,
    defaultBurst: 40,
    defaultRecordQuota: 100_000,
    defaultQueryQuota: 1_000_000,
    // Graviton data nodes in three zones (one replica keeps every shard in two zones), and three
    // dedicated masters, as AWS recommends for production domains.
    opensearch: {
      instanceType: 'r7g.large.search',
      instanceCount: 3,
      availabilityZones: 3,
      volumeGiB: 100,
      masterNodes: { instanceType: 'm7g.large.search', count: 3 },
    },
  },
};

/** The configuration of a stage by name; throws for an unknown one. */
export function stageConfig(name: string): StageConfig {
  if (name !== 'dev' && name !== 'prod') throw new Error(`unknown stage "${name}": use -c stage=dev or -c stage=prod`);
  return STAGES[name];
}
