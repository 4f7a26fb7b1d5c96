import { Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { MemoryServiceStack } from '../../infra/memory-service-stack.js';
import { testApp } from './cdk-app.js';

/**
 * The whole stack, synthesized as `cdk synth` does but without bundling (the bundles have their own test),
 * with cdk-nag's AwsSolutions rules as a validation plugin: a finding that is not acknowledged with a
 * reason fails the synthesis. `outdir` is the cloud assembly, with the staged assets.
 */
export function synthServiceStack(
  stage: 'dev' | 'prod',
  context: Record<string, string> = {},
): { template: Template; stack: MemoryServiceStack; outdir: string } {
  const app = testApp({ context: { stage, 'aws:cdk:bundling-stacks': [], ...context } });
  const stack = new MemoryServiceStack(app, `MemoryService-${stage}`, { stage, env: { account: '123456789012', region: 'eu-west-1' } });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  app.synth();
  return { template: Template.fromStack(stack), stack, outdir: app.outdir };
}
