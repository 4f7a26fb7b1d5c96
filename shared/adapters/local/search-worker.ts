import { parentPort, workerData } from 'node:worker_threads';
import type { SearchHit } from '../../domain/record.js';
import type { SearchQuery } from '../../ports.js';
import { openReadOnlyDatabase, type Db } from './database.js';
import { SqliteSearchIndex } from './search-index.js';

/** A search on one worker thread (search-pool.ts): the request's id and the search's arguments. */
export interface SearchRequest {
  id: number;
  tenantId: string;
  query: SearchQuery;
}

/** The answer to one SearchRequest: the hits, or why it failed. */
export type SearchReply = { id: number; hits: SearchHit[] } | { id: number; error: string };

if (!parentPort) throw new Error('search-worker.ts runs as a worker thread of SqliteSearchPool');
const port = parentPort;
// A reader of its own: WAL lets it read while the server's connection writes, and each statement sees
// every transaction committed before it began, so a search still finds any write that has returned.
const index = new SqliteSearchIndex(open((workerData as { file: string }).file));

function open(file: string): Db {
  try {
    return openReadOnlyDatabase(file);
  } catch (error) {
    // A plain Error: the pool gets it as a clone, and a SqliteError's clone keeps its code but not its message.
    throw new Error(`cannot open ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

port.on('message', (request: SearchRequest) => {
  index.search(request.tenantId, request.query).then(
    (hits) => port.postMessage({ id: request.id, hits } satisfies SearchReply),
    (error: unknown) => port.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) } satisfies SearchReply),
  );
});
