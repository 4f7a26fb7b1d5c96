import type Database from 'better-sqlite3';

/**
 * A connection to the service's SQLite database. It has a module of its own so that what only needs the type
 * (the stores, the engine's storage, the merge) does not import database.ts, which imports some of them for
 * its migrations.
 */
export type Db = Database.Database;
