import { Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';

export interface MemoryServiceStackProps extends StackProps {
  stage: string;
}

/**
 * The AWS deployment of the memory service. The Lambda handlers in functions/ are already the ones that
 * will run here; the API Gateway, DynamoDB, OpenSearch and SQS resources are added by the AWS backend and
 * CDK work (see docs/architecture.md), so today this stack synthesizes with no resources.
 */
export class MemoryServiceStack extends Stack {
  constructor(scope: Construct, id: string, props: MemoryServiceStackProps) {
    super(scope, id, { ...props, description: `Memory service for AI agents (${props.stage})` });
  }
}
