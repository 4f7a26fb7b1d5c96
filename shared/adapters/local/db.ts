import type Database from 'better-sqlite3';

/**
 * A connection to the service's SQLite database. It has a module of its own so that what only needs the type
 * (the stores, the engine's storage, the merge) does not import database.ts, which imports some of them for
 * its migrations.
 */
export type Db = Database.Database;

/**
 * `prepare` of each SQL text, made at its first use and kept: for the statements whose text varies with the
 * request (which filters it has), a few dozen shapes on a connection.
 */
export function preparedBySql<T>(prepare: (sql: string) => T): (sql: string) => T {
  const kept = new Map<string, T>();
  return (sql) => {
    let prepared = kept.get(sql);
    if (prepared === undefined) kept.set(sql, (prepared = prepare(sql)));
    return prepared;
  };
}
