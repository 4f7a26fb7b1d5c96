import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { MemoryServiceStack } from './memory-service-stack.js';

/** The CDK app: one stack per stage, chosen with `-c stage=dev|prod`, checked by cdk-nag's AwsSolutions rules. */
const app = new App();
const stage = String(app.node.tryGetContext('stage') ?? 'dev');
new MemoryServiceStack(app, `MemoryService-${stage}`, { stage });
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
