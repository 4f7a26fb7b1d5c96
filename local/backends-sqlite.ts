/**
 * The embedded backends of the local runtime and the admin CLI (MEMORY_BACKEND=sqlite, the default): every
 * port on one SQLite file. backends.ts chooses between these and backends-dynamodb.ts.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { existsSync } from 'node:fs';
import { openSqliteAdapters, type SqliteAdapters } from '../shared/adapters/local/index.js';
import { SqliteSearchPool } from '../shared/adapters/local/search-pool.js';
import { SearchMerge } from '../shared/adapters/local/search-merge.js';
import type { MergeThreadEvent } from '../shared/adapters/local/search-merge-thread.js';
import { ThreadMerger, type SearchMerger } from '../shared/adapters/local/search-merger.js';
import { CursorSealer } from '../shared/domain/cursor-sealer.js';
import type { SearchIndex } from '../shared/ports.js';
import { NoDatabaseError, type AdminStores, type Backend } from './backend.js';
import { ClassificationThread } from './classification.js';
import type { LocalConfig } from './config.js';

/** The embedded default: every port on one SQLite file; search sees a write as soon as it returns. */
export function openSqliteBackend(config: LocalConfig, logger: Logger): Backend {
  // An upgrade from a version before the search engine indexes the stored records first, with progress.
  // The merges of what is written afterwards run on a thread of their own (search-merger.ts).
  const sqlite = openSqliteAdapters(config.databaseFile, {
    progress: (line) => logger.info(line),
    merger: () => new ThreadMerger(config.databaseFile, (event) => logMerge(logger, event)),
    blockCacheBytes: config.searchCacheBytes,
  });
  const search = searchOn(sqlite, config.databaseFile, config);
  const merge = new SearchMerge(sqlite.db);
  return {
    ...sqlite,
    search,
    cursors: new CursorSealer(sqlite.secrets.get('cursor-key')),
    mergeBacklog: () => merge.pending(),
    authGeneration: () => sqlite.keys.authGeneration(),
    classificationThread: (settings, threadLogger) => new ClassificationThread({ ...settings, file: config.databaseFile }, threadLogger),
    describe: `data in ${config.dataDir}`,
    // The merge thread starts with the server, not at its first write: a backlog that a restart or an
    // import by the admin CLI left is merged without waiting for one, and so is what another process writes.
    start: () => sqlite.merger.wake(),
    sweep: () => ({ purgedIdempotencyKeys: sqlite.records.purgeExpiredIdempotencyKeys() }),
    settle: async () => undefined,
    close: async () => {
      await search.close();
      await sqlite.merger.close();
      sqlite.close();
    },
  };
}

/** A merge is logged at debug level, a failed one as an error (the thread goes on, and searches read the tail). */
function logMerge(logger: Logger, event: MergeThreadEvent): void {
  if (event.kind === 'failed') logger.error('a search index merge failed', { reason: event.error });
  else logger.debug('search index merge', { records: event.docs, ms: Math.round(event.ms), waiting: event.pending });
}

/**
 * The SQLite search as the server runs it: on worker threads with connections of their own, a deadline
 * and a bounded queue (search-pool.ts), except the searches whose work is bounded below the cost of the
 * hop (the newest records without filters, words the tenant has in few records), and those of moderate
 * work when no other search runs, which run on the adapters' connection in the server's thread; or, with
 * 0 threads, all on that connection, where a search is one synchronous call that nothing waits behind.
 */
export function searchOn(
  sqlite: SqliteAdapters,
  file: string,
  config: Pick<LocalConfig, 'searchThreads' | 'searchTimeoutMs' | 'searchQueue' | 'searchCacheBytes'>,
): SearchIndex & { close(): Promise<void> } {
  if (config.searchThreads > 0) {
    return new SqliteSearchPool(file, {
      threads: config.searchThreads,
      timeoutMs: config.searchTimeoutMs,
      maxWaiting: config.searchQueue,
      blockCacheBytes: config.searchCacheBytes,
      inline: sqlite.search,
    });
  }
  return { search: (tenantId, query) => sqlite.search.search(tenantId, query), close: async () => undefined };
}

/**
 * openAdminStores on SQLite: unless `create`, the file a server made must exist; otherwise it throws
 * NoDatabaseError and creates nothing, neither a file nor a directory.
 */
export function openSqliteAdminStores(config: LocalConfig, { create }: { create: boolean }): AdminStores {
  const file = config.databaseFile;
  if (!create && !existsSync(file)) {
    throw new NoDatabaseError(
      `no database at ${file}: MEMORY_DATA_DIR (${config.dataDir}) is not a directory the server has started on. ` +
        "Set MEMORY_DATA_DIR to the server's data directory, or pass --create to start a new database there.",
      { path: file },
    );
  }
  const sqlite = openSqliteAdapters(file, { mustExist: !create, merger: () => MERGES_LEFT_TO_THE_SERVER });
  return { keys: sqlite.keys, usage: sqlite.usage, records: sqlite.records, gateway: null, close: () => sqlite.close() };
}

/**
 * The admin CLI merges nothing into the search index itself. A running server's merge thread takes in what
 * another process wrote within a second (it looks every `maxDelayMs`), and a server that starts merges a
 * large backlog before it listens (mergeBacklogAtOpen); until then searches read the records from the tail.
 * Merging in the CLI too made an import of 100 000 records take twice as long, with twice the memory
 * (6.6 s and 380 MB against 3.0 s and 170 MB), for work the server does anyway.
 */
const MERGES_LEFT_TO_THE_SERVER: SearchMerger = { wake: () => undefined, close: async () => undefined };
