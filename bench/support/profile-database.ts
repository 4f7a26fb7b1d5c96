import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

/** What `bench/engine-profile.ts` writes beside the database it builds (`engine-profile.json`). */
export interface ProfileDatabase {
  records: number;
  seed: number;
  /** Each corpus tenant's id, by name. */
  tenants: Record<string, string>;
  /** The instant the `since` searches take. */
  midpoint: string;
}

export const PROFILE_META = 'engine-profile.json';

/**
 * Copies the database of a `bench/engine-profile.ts` directory into `dataDir`, for a server to run on,
 * without the classification jobs its import left queued (a tool that waits for the classification then
 * waits for its own writes only); resolves what the directory's `engine-profile.json` says of it.
 */
export function copyProfileDatabase(from: string, dataDir: string): ProfileDatabase {
  const meta = JSON.parse(readFileSync(join(from, PROFILE_META), 'utf8')) as ProfileDatabase;
  cpSync(join(from, 'memory.db'), join(dataDir, 'memory.db'));
  const db = new Database(join(dataDir, 'memory.db'));
  db.prepare('DELETE FROM classification_jobs').run();
  db.close();
  return meta;
}
