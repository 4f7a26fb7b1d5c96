import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { ForgetJobSink } from '../dynamodb/forget-jobs.js';

/** Forget jobs on SQS: one message per job, `{"tenant_id","job_id"}`, for the forget worker. */
export class SqsForgetSink implements ForgetJobSink {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async start(job: { tenant_id: string; job_id: string }): Promise<void> {
    await this.client.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify(job) }));
  }
}
