/**
 * `GET /healthz`'s handler (docs/api.md, "Health"): 200 when the database answers, 503 when it does not or
 * not in time, never cached, and the reason in the log only; and the SQLite store's ping, which fails once
 * its database is closed.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { expect, jest, test } from '@jest/globals';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { createHealthHandler } from '../../functions/health/handler.js';
import { openDatabase } from '../../shared/adapters/local/database.js';
import { SqliteRecordStore } from '../../shared/adapters/local/record-store.js';

const event = {} as APIGatewayProxyEvent;
const quietLogger = () => {
  const logger = new Logger({ serviceName: 'test', logLevel: 'SILENT' });
  const error = jest.spyOn(logger, 'error');
  return { logger, error };
};

test('200 {"status":"ok"} when the database answers, never cached', async () => {
  const { logger } = quietLogger();
  const result = await createHealthHandler({ records: { ping: async () => undefined }, logger })(event);
  expect(result).toEqual({ statusCode: 200, headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }, body: '{"status":"ok"}' });
});

test('503 {"status":"unavailable"} when it fails, with the reason in the log and not in the answer', async () => {
  const { logger, error } = quietLogger();
  const result = await createHealthHandler({ records: { ping: async () => Promise.reject(new Error('SQLITE_CANTOPEN: /data/memory.db')) }, logger })(event);
  expect(result).toMatchObject({ statusCode: 503, body: '{"status":"unavailable"}', headers: { 'Cache-Control': 'no-store' } });
  expect(result.body).not.toContain('SQLITE');
  expect(error).toHaveBeenCalledWith(expect.any(String), { error: 'SQLITE_CANTOPEN: /data/memory.db' });
});

test('503 when it does not answer in time: a hung database does not hang the check', async () => {
  const { logger } = quietLogger();
  const started = Date.now();
  const result = await createHealthHandler({ records: { ping: () => new Promise<void>(() => undefined) }, logger, timeoutMs: 50 })(event);
  expect(result.statusCode).toBe(503);
  expect(Date.now() - started).toBeLessThan(5000);
});

test("the SQLite store's ping resolves on an open database and rejects once it is closed", async () => {
  const db = openDatabase(':memory:');
  const records = new SqliteRecordStore(db);
  await expect(records.ping()).resolves.toBeUndefined();
  db.close();
  await expect(records.ping()).rejects.toThrow(/not open/);
});
