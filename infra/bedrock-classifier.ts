import { ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { BEDROCK_TIMEOUT_MS } from './settings.js';

/**
 * The geography prefixes of Bedrock's cross-region (system-defined) inference profile ids, as in
 * `us.anthropic.claude-3-haiku-20240307-v1:0`. An id without one of them is taken for a foundation model.
 */
export const INFERENCE_PROFILE_GEOGRAPHIES = ['us', 'us-gov', 'eu', 'apac', 'jp', 'au', 'ca', 'global'] as const;

/** A model id as `-c bedrockModelId=…` gives it. */
export interface BedrockModel {
  /** What the classifier sends as `modelId`. */
  id: string;
  /** The foundation model that answers: the id itself, or the profile's id without its geography. */
  foundationModelId: string;
  /** Whether the id is a cross-region inference profile. */
  crossRegion: boolean;
}

/** Reads a Bedrock model id; throws, saying what is accepted, for an ARN or anything else. */
export function parseBedrockModelId(id: string): BedrockModel {
  if (!/^[a-z0-9-]+\.[A-Za-z0-9._:-]+$/.test(id)) {
    throw new Error(
      `bedrockModelId "${id}" is not a Bedrock model id: give a foundation model id (anthropic.claude-3-haiku-20240307-v1:0) ` +
        'or a cross-region inference profile id (us.anthropic.claude-3-haiku-20240307-v1:0), not an ARN',
    );
  }
  const [prefix, ...rest] = id.split('.');
  const crossRegion = (INFERENCE_PROFILE_GEOGRAPHIES as readonly string[]).includes(prefix!);
  return { id, foundationModelId: crossRegion ? rest.join('.') : id, crossRegion };
}

/**
 * Switches the classification worker to Bedrock: its settings, and `bedrock:InvokeModel` (which the
 * Converse API is authorized by) on that one model and nothing else.
 */
export function useBedrockClassifier(fn: LambdaFunction, modelId: string): BedrockModel {
  const model = parseBedrockModelId(modelId);
  fn.addEnvironment('MEMORY_CLASSIFIER', 'bedrock');
  fn.addEnvironment('BEDROCK_MODEL_ID', model.id);
  fn.addEnvironment('BEDROCK_TIMEOUT_MS', String(BEDROCK_TIMEOUT_MS));

  const stack = Stack.of(fn);
  const foundationModelArn = (region: string) =>
    stack.formatArn({ service: 'bedrock', region, account: '', resource: 'foundation-model', resourceName: model.foundationModelId, arnFormat: ArnFormat.SLASH_RESOURCE_NAME });
  if (!model.crossRegion) {
    fn.addToRolePolicy(new PolicyStatement({ actions: ['bedrock:InvokeModel'], resources: [foundationModelArn(stack.region)] }));
    return model;
  }

  // A cross-region inference profile is invoked in the stack's region and answered by the foundation model
  // in whichever of the profile's regions AWS picks, and IAM checks both: the profile, and the model in
  // the region that answers. The regions are AWS's to change (a global profile spans every commercial
  // region), so the model's ARN names any region; the condition then lets it be invoked only through
  // this profile, never directly.
  const profileArn = stack.formatArn({ service: 'bedrock', resource: 'inference-profile', resourceName: model.id, arnFormat: ArnFormat.SLASH_RESOURCE_NAME });
  fn.addToRolePolicy(new PolicyStatement({ actions: ['bedrock:InvokeModel'], resources: [profileArn] }));
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['bedrock:InvokeModel'],
      resources: [foundationModelArn('*')],
      conditions: { StringEquals: { 'bedrock:InferenceProfileArn': profileArn } },
    }),
  );
  Validations.of(fn).acknowledge({
    id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/${model.foundationModelId}]`,
    reason:
      'A cross-region inference profile answers from a foundation model in regions AWS chooses and may change; the ARN names one model, and the bedrock:InferenceProfileArn condition allows it only through the configured profile.',
  });
  return model;
}
