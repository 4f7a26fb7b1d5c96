import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from '../../shared/adapters/local/database.js';

/** The FTS5 tokenizer the service uses (shared/adapters/local/database.ts). */
export const FTS5_TOKENIZE = 'porter unicode61 remove_diacritics 2';

/**
 * Opens a design's database file as the service opens its own (database.ts): WAL, synchronous FULL, the
 * default page cache. Only the schema differs, which the design creates.
 */
export function openDesignDatabase(dir: string, file: string): Db {
  mkdirSync(dir, { recursive: true });
  const db = new Database(join(dir, file));
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  return db;
}

/** Moves the WAL into the main file and closes, so that the file's size is the design's size. */
export function closeDesignDatabase(db: Db): void {
  if (!db.open) return;
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}
