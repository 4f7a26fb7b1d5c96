import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { ClassificationJob, JobSink } from '../../../ports.js';

/** The most entries one SendMessageBatch call takes. */
export const SQS_BATCH_LIMIT = 10;

/**
 * Classification jobs on SQS: one message per job, its body `{"tenant_id","record_id"}` as the
 * classifier parses it. Jobs go out in batches of ten, sent concurrently; each job's result says whether
 * SQS took it, so a caller retries only the ones that failed.
 */
export class SqsJobSink implements JobSink {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  /** Sends every job; one entry per job, in order: null when SQS stored it, or why it did not. */
  async enqueue(jobs: ClassificationJob[]): Promise<(string | null)[]> {
    const results: (string | null)[] = jobs.map(() => null);
    const chunks: number[] = [];
    for (let start = 0; start < jobs.length; start += SQS_BATCH_LIMIT) chunks.push(start);
    await Promise.all(chunks.map((start) => this.sendChunk(jobs.slice(start, start + SQS_BATCH_LIMIT), start, results)));
    return results;
  }

  /** Sends one batch and writes each of its jobs' outcome into `results` at `offset` + its entry Id. */
  private async sendChunk(chunk: ClassificationJob[], offset: number, results: (string | null)[]): Promise<void> {
    try {
      const output = await this.client.send(
        new SendMessageBatchCommand({
          QueueUrl: this.queueUrl,
          // The Id is the job's place in the chunk: unique within the batch, and maps a Failed entry back.
          Entries: chunk.map((job, i) => ({
            Id: String(i),
            MessageBody: JSON.stringify({ tenant_id: job.tenant_id, record_id: job.record_id }),
          })),
        }),
      );
      const answered = new Set<number>();
      for (const entry of output.Successful ?? []) answered.add(Number(entry.Id));
      for (const entry of output.Failed ?? []) {
        const i = Number(entry.Id);
        if (!Number.isInteger(i) || i < 0 || i >= chunk.length) continue;
        answered.add(i);
        results[offset + i] = `SQS refused the message: ${entry.Code ?? 'unknown'}${entry.Message ? ` (${entry.Message})` : ''}`;
      }
      // SQS lists every entry as Successful or Failed; one it left out is not known to be stored.
      chunk.forEach((_, i) => {
        if (!answered.has(i)) results[offset + i] = 'SQS did not report the message as sent';
      });
    } catch (error) {
      const reason = `SendMessageBatch failed: ${error instanceof Error ? error.message : String(error)}`;
      chunk.forEach((_, i) => (results[offset + i] = reason));
    }
  }
}
