import { parentPort, workerData } from 'node:worker_threads';
import type { SearchQuery } from '../../ports.js';
import { openReadOnlyDatabase, type Db } from './database.js';
import type { SearchRow } from './rows.js';
import { SqliteSearchIndex } from './search-index.js';

/** A search on one worker thread (search-pool.ts): the request's id and the search's arguments. */
export interface SearchRequest {
  id: number;
  tenantId: string;
  query: SearchQuery;
}

/** What a search thread is started with. */
export interface SearchWorkerData {
  file: string;
  blockCacheBytes: number | undefined;
}

/** The answer to one SearchRequest: flat rows (never a caller's nested value), or why it failed. */
export type SearchReply = { id: number; rows: SearchRow[] } | { id: number; error: string };

if (!parentPort) throw new Error('search-worker.ts runs as a worker thread of SqliteSearchPool');
const port = parentPort;
// A reader of its own: WAL lets it read while the server's connection writes, and each statement sees
// every transaction committed before it began, so a search still finds any write that has returned.
const data = workerData as SearchWorkerData;
const index = new SqliteSearchIndex(open(data.file), { blockCacheBytes: data.blockCacheBytes });

function open(file: string): Db {
  try {
    return openReadOnlyDatabase(file);
  } catch (error) {
    // A plain Error: the pool gets it as a clone, and a SqliteError's clone keeps its code but not its message.
    throw new Error(`cannot open ${file}: ${messageOf(error)}`);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Posts a reply; one that cannot be sent is answered with the reason instead, so the search never waits in vain. */
function reply(message: SearchReply): void {
  try {
    port.postMessage(message);
  } catch (error) {
    port.postMessage({ id: message.id, error: `the search's answer could not be sent: ${messageOf(error)}` } satisfies SearchReply);
  }
}

port.on('message', (request: SearchRequest) => {
  let message: SearchReply;
  try {
    message = { id: request.id, rows: index.searchRows(request.tenantId, request.query) };
  } catch (error) {
    message = { id: request.id, error: messageOf(error) };
  }
  reply(message);
});
