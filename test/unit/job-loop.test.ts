import { Logger } from '@aws-lambda-powertools/logger';
import { afterEach, beforeEach, expect, test } from '@jest/globals';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JobLoop } from '../../local/job-loop.js';
import { openSqliteAdapters, type SqliteAdapters } from '../../shared/adapters/local/index.js';

/**
 * The classification job loop (local/job-loop.ts) over the real SQLite queue: it plays SQS for the
 * classifier, and its passes run in the background loop, whose own contract test/unit/background-loop.test.ts checks.
 */

let dir: string;
let adapters: SqliteAdapters;
let loop: JobLoop | undefined;
let errors: { message: string; details: Record<string, unknown> }[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memory-job-loop-'));
  adapters = openSqliteAdapters(join(dir, 'memory.db'));
  errors = [];
});
afterEach(async () => {
  await loop?.stop();
  loop = undefined;
  adapters.close();
  rmSync(dir, { recursive: true, force: true });
});

function start(worker: (event: SQSEvent) => Promise<SQSBatchResponse>, options: { leaseMs?: number; maxAttempts?: number } = {}): JobLoop {
  const logger = new Logger({ serviceName: 'memory', logLevel: 'SILENT' });
  logger.error = (...args: unknown[]) => void errors.push({ message: String(args[0]), details: args[1] as Record<string, unknown> });
  loop = new JobLoop({ jobs: adapters.jobs, worker, logger, pollMs: 5, ...options });
  loop.start();
  return loop;
}

async function until(done: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

test('delivers the jobs as an SQS batch and deletes those that succeeded; a second start starts no second loop', async () => {
  await adapters.jobs.enqueue([1, 2, 3].map((n) => ({ tenant_id: 't', record_id: `r${n}` })));
  const batches: string[][] = [];
  const loop = start(async (event) => {
    batches.push(event.Records.map((r) => (JSON.parse(r.body) as { record_id: string }).record_id));
    return { batchItemFailures: [] };
  });
  loop.start();
  await until(() => adapters.jobs.backlog() === 0);
  expect(batches).toEqual([['r1', 'r2', 'r3']]);
});

test('a failed job is put back and tried again, and is dead after its last attempt', async () => {
  await adapters.jobs.enqueue([{ tenant_id: 't', record_id: 'r1' }]);
  let deliveries = 0;
  start(async (event) => {
    deliveries++;
    return { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) };
  }, { maxAttempts: 2 });
  // The second attempt waits a random time up to a second (the one backoff, backoff.ts).
  await until(() => adapters.jobs.backlog() === 0, 3000);
  expect(deliveries).toBe(2);
});

test('a pass that fails is logged with the jobs it held, and the loop carries on once their lease ends', async () => {
  await adapters.jobs.enqueue([{ tenant_id: 't', record_id: 'r1' }]);
  let calls = 0;
  start(async () => {
    if (++calls === 1) throw new Error('worker crashed');
    return { batchItemFailures: [] };
  }, { leaseMs: 50 });
  await until(() => adapters.jobs.backlog() === 0);
  expect(errors).toEqual([
    { message: 'classification pass failed', details: expect.objectContaining({ loop: 'classification', queue: 'classification', job_ids: ['1'], error: new Error('worker crashed') }) },
  ]);
});
