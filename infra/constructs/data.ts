import { Duration, Validations } from 'aws-cdk-lib';
import { AttributeType, Billing, StreamViewType, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { TABLES, type TableRole, type TableSpec } from '../../shared/adapters/aws/dynamodb/tables.js';
import type { StageConfig } from '../stage.js';

export interface MemoryDataProps {
  stage: StageConfig;
  /** The classifier's timeout: the queue hides a message six times as long, as AWS advises for Lambda. */
  classifierTimeout: Duration;
  /** The forget worker's timeout: the forget queue hides a job's message six times as long. */
  forgetWorkerTimeout: Duration;
}

/** How often a classification message is tried before it goes to the DLQ. */
export const CLASSIFICATION_MAX_RECEIVES = 5;

/**
 * How often a forget job's message is delivered before it goes to the forget DLQ. The forget worker reads
 * the same number (FORGET_MAX_RECEIVES) to know its last delivery, on which it marks the job failed.
 */
export const FORGET_MAX_RECEIVES = 3;

/**
 * The stateful part: the four tables of shared/adapters/aws/dynamodb/tables.ts (on demand, PITR,
 * encrypted with the AWS managed key, deletion protection in prod, the records stream), the classification
 * queue with its DLQ, the forget queue with its DLQ, the queue where stream records that still fail
 * after their retries land, and the secret key that seals listing cursors.
 */
export class MemoryData extends Construct {
  readonly tables: Record<TableRole, TableV2>;
  readonly classificationQueue: Queue;
  readonly classificationDlq: Queue;
  readonly streamFailures: Queue;
  /** Large forgets, one message per job (`{"tenant_id","job_id"}`), for the forget worker. */
  readonly forgetQueue: Queue;
  readonly forgetDlq: Queue;
  /** The key that seals listing cursors (shared/domain/cursor-sealer.ts): a generated string, read by the read function. */
  readonly cursorKey: Secret;

  constructor(scope: Construct, id: string, props: MemoryDataProps) {
    super(scope, id);
    const { stage } = props;
    const table = (role: TableRole): TableV2 => {
      const spec: TableSpec = TABLES[role];
      return new TableV2(this, role, {
        partitionKey: { name: spec.partitionKey, type: AttributeType.STRING },
        ...(spec.sortKey ? { sortKey: { name: spec.sortKey, type: AttributeType.STRING } } : {}),
        billing: Billing.onDemand(),
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        encryption: TableEncryptionV2.awsManagedKey(),
        deletionProtection: stage.deletionProtection,
        removalPolicy: stage.removalPolicy,
        ...(spec.stream ? { dynamoStream: StreamViewType[spec.stream] } : {}),
        ...(spec.timeToLiveAttribute ? { timeToLiveAttribute: spec.timeToLiveAttribute } : {}),
      });
    };
    this.tables = { records: table('records'), tenants: table('tenants'), usage: table('usage'), idempotency: table('idempotency') };

    const queue = (name: string, extra: ConstructorParameters<typeof Queue>[2] = {}) =>
      new Queue(this, name, {
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: Duration.days(14),
        removalPolicy: stage.removalPolicy,
        ...extra,
      });
    this.classificationDlq = queue('ClassificationDlq');
    this.streamFailures = queue('StreamFailures');
    Validations.of(this.streamFailures).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This queue is itself a dead-letter destination: the stream event source mapping sends the records that failed every retry here.',
    });
    this.classificationQueue = queue('ClassificationQueue', {
      retentionPeriod: Duration.days(4),
      visibilityTimeout: Duration.seconds(props.classifierTimeout.toSeconds() * 6),
      deadLetterQueue: { queue: this.classificationDlq, maxReceiveCount: CLASSIFICATION_MAX_RECEIVES },
    });
    // A message only names the tenant and the job, so neither queue holds record data. Six times the
    // worker's 15 minutes is 90 minutes: a failed or cut-off run is delivered again after that, so a job that
    // fails on every delivery is marked failed after about three hours and reaches the DLQ after about four
    // and a half, well inside the four days a message is kept.
    this.forgetDlq = queue('ForgetDlq');
    this.forgetQueue = queue('ForgetQueue', {
      retentionPeriod: Duration.days(4),
      visibilityTimeout: Duration.seconds(props.forgetWorkerTimeout.toSeconds() * 6),
      deadLetterQueue: { queue: this.forgetDlq, maxReceiveCount: FORGET_MAX_RECEIVES },
    });

    // 64 letters and digits, about 380 bits: the HMAC key is the string's bytes. It lives and goes with the
    // tables, like the records whose cursors it seals.
    this.cursorKey = new Secret(this, 'CursorKey', {
      description: 'The key that seals the listing cursors of the memory service (GET /api/v1/record). Changing it invalidates every cursor handed out.',
      generateSecretString: { passwordLength: 64, excludePunctuation: true, includeSpace: false },
      removalPolicy: stage.removalPolicy,
    });
    Validations.of(this.cursorKey).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The cursor key is the service\'s own, shared with no one, and never leaves the read function; a rotation ends every listing in progress (400 invalid_cursor), so it is rotated by hand when needed (docs/deploy.md), not on a schedule.',
    });
  }
}
