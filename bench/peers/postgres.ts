/**
 * PostgreSQL 15 full-text search as a peer for the benchmark: what a self-hosting user would otherwise
 * pick. A throwaway server on a fresh data directory and a free port, loaded with the same corpus, and
 * asked the same queries with `ts_rank` over a stored, weighted tsvector (title A, body B) and a GIN index
 * that includes the tenant.
 *
 * Its parts: postgres-install.ts (finding or installing the binaries), postgres-server.ts (a server's
 * start and stop), postgres-peer.ts (the table, the load and the queries, OR semantics as ours) and
 * postgres-self-check.ts. The benchmark and the tests import them from here.
 *
 * Check it by hand: `node_modules/.bin/tsx bench/peers/postgres.ts --self-check [--rows 100000]`.
 */
import { pathToFileURL } from 'node:url';
import { selfCheck } from './postgres-self-check.js';

export { ensurePostgres, findPostgresBinDir } from './postgres-install.js';
export { websearchText, type PeerQuery, type PeerRecord, type PostgresPeer } from './postgres-peer.js';
export { startPostgres } from './postgres-server.js';

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (!process.argv.includes('--self-check')) {
    process.stderr.write('usage: tsx bench/peers/postgres.ts --self-check [--rows N] [--cranfield DIR]\n');
    process.exitCode = 2;
  } else {
    selfCheck(process.argv.slice(2)).catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
  }
}
