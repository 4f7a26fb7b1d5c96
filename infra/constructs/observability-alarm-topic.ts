import { Stack, type RemovalPolicy } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';

/** The `<prefix>-alarms` SNS topic, encrypted with a key of its own, to which this account's CloudWatch alarms may publish. */
export function createAlarmTopic(scope: Construct, prefix: string, removalPolicy: RemovalPolicy): Topic {
  const { account, region, partition } = Stack.of(scope);

  // CloudWatch cannot publish to a topic encrypted with the AWS managed key alias/aws/sns: that key's
  // policy cannot be changed to let cloudwatch.amazonaws.com use it, and the notifications would be
  // dropped with only a line in the alarm history. So the topic has its own key, which allows it. The key
  // statement has no condition, as in the SNS guide: a missing context key there would drop every
  // notification silently, and the topic policy below already limits publishing to this account's alarms.
  const key = new Key(scope, 'AlarmTopicKey', {
    description: `Encrypts the ${prefix} alarm topic`,
    enableKeyRotation: true,
    removalPolicy,
  });
  key.addToResourcePolicy(
    new PolicyStatement({
      sid: 'CloudWatchAlarmsPublishToEncryptedTopic',
      principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
    }),
  );
  const topic = new Topic(scope, 'AlarmTopic', {
    topicName: `${prefix}-alarms`,
    displayName: `${prefix} alarms`,
    masterKey: key,
    enforceSSL: true,
  });
  // enforceSSL gives the topic a resource policy, which replaces SNS's default one: without this
  // statement the alarms of this account could no longer publish.
  topic.addToResourcePolicy(
    new PolicyStatement({
      sid: 'CloudWatchAlarmsPublish',
      principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: {
        StringEquals: { 'aws:SourceAccount': account },
        ArnLike: { 'aws:SourceArn': `arn:${partition}:cloudwatch:${region}:${account}:alarm:*` },
      },
    }),
  );
  return topic;
}
