import { Logger } from '@aws-lambda-powertools/logger';
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteAdapters, type SqliteAdapters } from '../../shared/adapters/local/index.js';
import { newRecord } from '../../shared/domain/record.js';
import { ClassificationThread } from '../../local/classification.js';
import { eventually } from '../support/local-service.js';

let dir: string;
let file: string;
let sqlite: SqliteAdapters;
let thread: ClassificationThread | null = null;
const errors: { message: string; details: Record<string, unknown> }[] = [];
const logger = new Logger({ serviceName: 'memory', logLevel: 'SILENT' });
logger.error = (...args: unknown[]) => void errors.push({ message: String(args[0]), details: args[1] as Record<string, unknown> });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memory-classification-thread-'));
  file = join(dir, 'memory.db');
  sqlite = openSqliteAdapters(file, { merger: () => ({ wake: () => undefined, close: async () => undefined }) });
  errors.length = 0;
});
afterEach(async () => {
  await thread?.stop();
  thread = null;
  sqlite.close();
  rmSync(dir, { recursive: true, force: true });
});

async function write(title: string, body: string): Promise<string> {
  const record = newRecord('t1', { agent_id: 'a1', title, body, type: 'fact' }, new Date());
  await sqlite.records.create('t1', record, { recordQuota: 1000, month: '2026-11' });
  return record.id;
}

describe('the classification thread', () => {
  test("classifies the records' jobs on its own connection, those written while it runs too, and nothing once stopped", async () => {
    const ids = [];
    for (let i = 0; i < 25; i++) ids.push(await write(`Decision ${i}`, `We decided to move the deploy window to Thursday, item ${i}.`));
    thread = new ClassificationThread({ file, pollMs: 5, logLevel: 'SILENT' }, logger);
    thread.start();
    thread.start(); // a second start starts nothing more
    await eventually(async () => sqlite.jobs.backlog() === 0, 20_000);
    for (const id of ids) {
      const record = await sqlite.records.get('t1', id);
      expect(record?.classification).toMatchObject({ type: expect.any(String), confidence: expect.any(Number), model: expect.any(String) });
    }
    // A record written while it runs is classified too: the thread polls the file.
    const late = await write('Open question', 'Who owns the on-call rota next month?');
    await eventually(async () => (await sqlite.records.get('t1', late))?.classification, 20_000);
    await thread.stop();
    expect(errors).toEqual([]);
    // Stopped: a new job stays waiting.
    await write('After the stop', 'Nothing classifies this one.');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sqlite.jobs.backlog()).toBe(1);
  }, 40_000);

  test('a thread that ends on its own is logged and started again', async () => {
    // An entry that exits at once, as a thread that crashed would.
    const dying = new URL(`data:text/javascript,${encodeURIComponent('process.exit(3)')}`);
    thread = new ClassificationThread({ file, pollMs: 5, logLevel: 'SILENT' }, logger, dying);
    thread.start();
    await eventually(async () => errors.filter((e) => e.message.includes('starting it again')).length >= 2, 10_000);
    expect(errors[0]!.details).toMatchObject({ exit_code: 3 });
    await thread.stop();
    const after = errors.length;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // Stopped: nothing is started again.
    expect(errors.length).toBe(after);
  }, 20_000);

  test('stop before start resolves, and a start after stop starts nothing', async () => {
    thread = new ClassificationThread({ file, pollMs: 5, logLevel: 'SILENT' }, logger);
    await thread.stop();
    thread.start();
    await write('Not classified', 'The thread was stopped before it started.');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sqlite.jobs.backlog()).toBe(1);
  });
});
