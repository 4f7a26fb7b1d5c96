import { App } from 'aws-cdk-lib';
import { MemoryServiceStack } from './memory-service-stack.js';

/** The CDK app: one stack per stage, chosen with `-c stage=dev|prod`. */
const app = new App();
const stage = String(app.node.tryGetContext('stage') ?? 'dev');
new MemoryServiceStack(app, `MemoryService-${stage}`, { stage });
