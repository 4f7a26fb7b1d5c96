/**
 * PostgreSQL 15 full-text search as a peer for the benchmark: what a self-hosting user would otherwise
 * pick. A throwaway server on a fresh data directory and a free port, loaded with the same corpus, and
 * asked the same queries with `ts_rank` over a stored, weighted tsvector (title A, body B) and a GIN index
 * that includes the tenant.
 *
 * Queries use OR semantics to match ours: the text is parsed by the service's own `parseQuery`, so both
 * engines see the same terms and phrases, and rebuilt as `websearch_to_tsquery` input of the form
 * `"a quoted phrase" or term or term`. Only letters and digits reach that string, and it goes to the server
 * as a parameter, so no user input can change the SQL or the tsquery's structure.
 *
 * Check it by hand: `node_modules/.bin/tsx bench/peers/postgres.ts --self-check [--rows 100000]`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, chownSync, constants, mkdtempSync, openSync, closeSync, readFileSync, rmSync, appendFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { freePort } from '../../local/free-port.js';
import { loadIntoPeer, scoreSet } from '../quality/score.js';
import { CRANFIELD_DIR, cranfield as cranfieldSet } from '../quality/sets.js';
import { isEmptyQuery, parseQuery, type ParsedQuery } from '../../shared/domain/query-parse.js';

export interface PeerRecord {
  tenant: string;
  id: string;
  agent_id: string;
  type: string;
  title: string;
  body: string;
  client: string | null;
  /** ISO 8601 date-time. */
  created_at: string;
}

export interface PeerQuery {
  /** Free text as a user would send it; absent or blank asks for the newest records. */
  q?: string;
  agent_id?: string;
  type?: string;
  client?: string;
  /** ISO 8601 date-time: only records created at or after it. */
  since?: string;
  limit: number;
}

export interface PostgresPeer {
  /** The server's version, e.g. "PostgreSQL 15.18". */
  readonly version: string;
  /**
   * Loads records with multi-row INSERTs (one `unnest` of arrays per batch, several batches in flight),
   * with the GIN and recency indexes dropped; then builds them and runs VACUUM ANALYZE, as one would
   * after a bulk load. May be called more than once; each call rebuilds the indexes.
   */
  load(records: Iterable<PeerRecord> | AsyncIterable<PeerRecord>, onProgress?: (loaded: number) => void): Promise<void>;
  /** Ids of the tenant's matching records, best first. */
  search(tenant: string, query: PeerQuery): Promise<string[]>;
  /** Stops the server and removes its data directory. */
  stop(): Promise<void>;
}

const PG_MAJOR = 15;
const DEFAULT_BIN_DIR = `/usr/lib/postgresql/${PG_MAJOR}/bin`;
const REQUIRED_BINARIES = ['initdb', 'pg_ctl', 'postgres'];

/** Rows per INSERT statement while loading. */
const LOAD_BATCH = 2000;

/**
 * The only server settings changed from initdb's defaults besides where it listens; durability
 * (fsync, synchronous_commit, full_page_writes) stays as shipped, for a fair comparison. These are
 * what a self-hoster would set on a machine with a few GB of memory running one search table:
 */
const SERVER_SETTINGS: Record<string, string> = {
  // The default 128MB would not hold the index and the hot rows of a million records.
  shared_buffers: '512MB',
  // Builds the GIN index after the bulk load in memory rather than in many merged runs.
  maintenance_work_mem: '512MB',
  // Fewer forced checkpoints during the bulk load.
  max_wal_size: '4GB',
  // JIT compilation costs tens of milliseconds per query once the planner's estimate crosses
  // jit_above_cost, which ts_rank over many matches does; it is the usual advice for OLTP-shaped work.
  jit: 'off',
};

/** Where PostgreSQL 15's binaries should be: Debian's place, or $PG15_BIN_DIR. */
function binDirCandidate(): string {
  return process.env.PG15_BIN_DIR ?? DEFAULT_BIN_DIR;
}

/** The PostgreSQL 15 bin directory if its server binaries are installed, else null. Never installs. */
export function findPostgresBinDir(): string | null {
  const dir = binDirCandidate();
  try {
    for (const name of REQUIRED_BINARIES) accessSync(join(dir, name), constants.X_OK);
    return dir;
  } catch {
    return null;
  }
}

/**
 * Finds the PostgreSQL 15 bin directory; if it is missing, installs Debian's `postgresql-15` with
 * apt-get (after `apt-get update`), logging its output. Throws a clear error if it cannot.
 */
export async function ensurePostgres(log: (line: string) => void): Promise<string> {
  const found = findPostgresBinDir();
  if (found) return found;
  const why = `PostgreSQL ${PG_MAJOR} is not installed (no ${REQUIRED_BINARIES.join(', ')} in ${binDirCandidate()})`;
  if (process.getuid?.() !== 0) throw new Error(`${why}, and installing it needs root: run \`apt-get install postgresql-${PG_MAJOR}\` first.`);
  if (spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status !== 0) {
    throw new Error(`${why}, and there is no apt-get to install it with: install PostgreSQL ${PG_MAJOR} by hand.`);
  }
  log(`${why}; installing postgresql-${PG_MAJOR} from Debian's packages`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    await run('apt-get', ['update'], { env, onLine: (line) => log(`apt-get update: ${line}`) });
    // --no-upgrade: never change an installed package's version behind the user's back.
    await run('apt-get', ['install', '-y', '--no-install-recommends', '--no-upgrade', `postgresql-${PG_MAJOR}`], {
      env,
      onLine: (line) => log(`apt-get install: ${line}`),
    });
  } catch (error) {
    throw new Error(`could not install postgresql-${PG_MAJOR}: ${(error as Error).message}`);
  }
  const installed = findPostgresBinDir();
  if (!installed) throw new Error(`apt-get installed postgresql-${PG_MAJOR}, but its binaries are still not in ${binDirCandidate()}`);
  log(`installed PostgreSQL ${PG_MAJOR} in ${installed}`);
  return installed;
}

/**
 * Starts a fresh PostgreSQL 15 server: initdb into a new temporary directory (owned by the `postgres`
 * user when we run as root, since the server refuses to run as root), trust authentication, listening on
 * 127.0.0.1 only, on a free port. Creates the schema and returns a peer with a pool of `pool` connections
 * (default 32).
 */
export async function startPostgres(log: (line: string) => void, options: { pool?: number } = {}): Promise<PostgresPeer> {
  const binDir = await ensurePostgres(log);
  const asRoot = process.getuid?.() === 0;
  const owner = asRoot ? postgresUser() : null;
  const dir = mkdtempSync(join(tmpdir(), 'memory-bench-pg-'));
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const asOwner = (command: string, args: string[]): [string, string[]] => {
    if (!owner) return [command, args];
    if (hasCommand('runuser')) return ['runuser', ['-u', 'postgres', '--', command, ...args]];
    return ['su', ['postgres', '-s', '/bin/sh', '-c', [command, ...args].map(shellQuote).join(' ')]];
  };

  let server: ChildProcess | null = null;
  let pool: pg.Pool | null = null;
  // If the process exits without stop(), do not leave a server running or its data behind.
  const onExit = () => {
    if (server && server.exitCode === null) spawnSync(...asOwner(join(binDir, 'pg_ctl'), ['stop', '-D', dataDir, '-m', 'immediate', '-w']), { cwd: dir, stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    process.removeListener('exit', onExit);
    await pool?.end().catch(() => undefined);
    if (server && server.exitCode === null && server.signalCode === null) {
      const exited = new Promise<void>((resolve) => server!.once('exit', () => resolve()));
      await run(...asOwner(join(binDir, 'pg_ctl'), ['stop', '-D', dataDir, '-m', 'fast', '-w', '-t', '60']), { cwd: dir }).catch((error: unknown) => {
        log(`pg_ctl stop failed (${(error as Error).message}); killing the server`);
        server!.kill('SIGKILL');
      });
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    log(`initdb into ${dataDir}`);
    await run(...asOwner(join(binDir, 'initdb'), ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C.UTF-8', '--lc-messages=C']), { cwd: dir });
    const port = await freePort();
    const settings: Record<string, string> = {
      ...SERVER_SETTINGS,
      listen_addresses: "'127.0.0.1'",
      port: String(port),
      unix_socket_directories: `'${dir}'`,
      max_connections: String(Math.max(100, (options.pool ?? 32) + 20)),
    };
    appendFileSync(join(dataDir, 'postgresql.conf'), `\n# memory-service benchmark peer\n${Object.entries(settings).map(([k, v]) => `${k} = ${v}`).join('\n')}\n`);

    // The server runs as our child (in our process group, so Ctrl-C reaches it), its log in the temp dir.
    const logFd = openSync(logFile, 'a');
    if (owner) chownSync(logFile, owner.uid, owner.gid);
    server = spawn(...asOwner(join(binDir, 'postgres'), ['-D', dataDir]), { cwd: dir, stdio: ['ignore', logFd, logFd] });
    closeSync(logFd);
    await waitUntilReady(server, port, logFile);

    pool = new pg.Pool({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', max: options.pool ?? 32 });
    pool.on('error', (error) => log(`postgres pool: ${error.message}`));
    const versionRow = await pool.query<{ server_version: string }>('SHOW server_version');
    const version = `PostgreSQL ${versionRow.rows[0]!.server_version.split(' ')[0]}`;
    await pool.query(SCHEMA);
    log(`${version} listening on 127.0.0.1:${port} (data in ${dir})`);
    return new Peer(version, pool, stop);
  } catch (error) {
    const serverLog = tail(logFile);
    await stop();
    throw new Error(`could not start PostgreSQL: ${(error as Error).message}${serverLog ? `\nserver log:\n${serverLog}` : ''}`);
  }
}

const SCHEMA = `
  CREATE EXTENSION IF NOT EXISTS btree_gin;
  CREATE TABLE records (
    tenant text NOT NULL,
    id text NOT NULL,
    agent_id text NOT NULL,
    type text NOT NULL,
    client text,
    created_at timestamptz NOT NULL,
    title text NOT NULL,
    body text NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (
      setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', body), 'B')
    ) STORED,
    PRIMARY KEY (tenant, id)
  );`;

/** Built after each load (and dropped before it): faster than maintaining them row by row. */
const INDEXES = [
  // btree_gin lets the tenant sit in the same GIN index as the lexemes.
  'CREATE INDEX records_tsv ON records USING gin (tenant, tsv)',
  // The search without text: newest first.
  'CREATE INDEX records_recent ON records (tenant, created_at DESC, id DESC)',
];

const INSERT = `
  INSERT INTO records (tenant, id, agent_id, type, client, created_at, title, body)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::text[], $8::text[])`;

class Peer implements PostgresPeer {
  constructor(
    readonly version: string,
    private readonly pool: pg.Pool,
    readonly stop: () => Promise<void>,
  ) {}

  async load(records: Iterable<PeerRecord> | AsyncIterable<PeerRecord>, onProgress?: (loaded: number) => void): Promise<void> {
    await this.pool.query('DROP INDEX IF EXISTS records_tsv; DROP INDEX IF EXISTS records_recent');
    // to_tsvector for the stored column is the bulk of the work, and it runs in the inserting backend:
    // keep one batch in flight per core.
    const inFlight = new Set<Promise<void>>();
    const parallel = Math.max(1, Math.min(8, availableParallelism()));
    let failure: unknown = null;
    let loaded = 0;
    let batch: PeerRecord[] = [];
    const flush = async (rows: PeerRecord[]) => {
      while (inFlight.size >= parallel) await Promise.race(inFlight);
      if (failure) throw failure;
      const p = this.insert(rows).then(
        () => {
          loaded += rows.length;
          onProgress?.(loaded);
        },
        (error: unknown) => {
          failure ??= error;
        },
      );
      const tracked = p.finally(() => inFlight.delete(tracked));
      inFlight.add(tracked);
    };
    for await (const record of records) {
      batch.push(record);
      if (batch.length >= LOAD_BATCH) {
        await flush(batch);
        batch = [];
      }
    }
    if (batch.length > 0) await flush(batch);
    await Promise.all(inFlight);
    if (failure) throw failure;
    for (const sql of INDEXES) await this.pool.query(sql);
    await this.pool.query('VACUUM ANALYZE records');
  }

  private async insert(rows: PeerRecord[]): Promise<void> {
    const columns: (string | null)[][] = [[], [], [], [], [], [], [], []];
    for (const r of rows) {
      columns[0]!.push(r.tenant);
      columns[1]!.push(r.id);
      columns[2]!.push(r.agent_id);
      columns[3]!.push(r.type);
      columns[4]!.push(r.client);
      columns[5]!.push(r.created_at);
      columns[6]!.push(r.title);
      columns[7]!.push(r.body);
    }
    await this.pool.query(INSERT, columns);
  }

  async search(tenant: string, query: PeerQuery): Promise<string[]> {
    if (!Number.isInteger(query.limit) || query.limit < 1) throw new Error(`limit must be a positive integer, not ${query.limit}`);
    const params: unknown[] = [tenant];
    const where = ['tenant = $1'];
    for (const field of ['agent_id', 'type', 'client'] as const) {
      const value = query[field];
      if (value !== undefined && value !== null) {
        params.push(value);
        where.push(`${field} = $${params.length}`);
      }
    }
    if (query.since !== undefined) {
      params.push(query.since);
      where.push(`created_at >= $${params.length}::timestamptz`);
    }

    const parsed = parseQuery(query.q);
    let sql: string;
    if (parsed === null) {
      params.push(query.limit);
      sql = `SELECT id FROM records WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`;
    } else {
      // Only stop words or punctuation: nothing to match, as in the service.
      if (isEmptyQuery(parsed)) return [];
      params.push(websearchText(parsed));
      const text = params.length;
      params.push(query.limit);
      sql = `SELECT id FROM records, websearch_to_tsquery('english', $${text}) AS query
             WHERE ${where.join(' AND ')} AND tsv @@ query
             ORDER BY ts_rank(tsv, query) DESC, created_at DESC, id DESC LIMIT $${params.length}`;
    }
    const result = await this.pool.query<{ id: string }>(sql, params);
    return result.rows.map((row) => row.id);
  }
}

/**
 * The `websearch_to_tsquery` input for a parsed query: each phrase in double quotes, each term bare, all
 * joined by `or`. The parser keeps only runs of letters, digits and marks, so no quote, minus sign or
 * other websearch syntax can come from the user; the only operator word, "or", is a stop word outside
 * quotes and plain text inside them.
 */
export function websearchText(query: ParsedQuery): string {
  return [...query.phrases.map((words) => `"${words.join(' ')}"`), ...query.terms].join(' or ');
}

// ---------------------------------------------------------------------------------------------------
// Process plumbing.

function postgresUser(): { uid: number; gid: number } {
  const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) {
    throw new Error('running as root, but there is no `postgres` user to run the server as (PostgreSQL refuses to run as root)');
  }
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

function hasCommand(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Runs a command to completion; rejects with its exit status and the end of its output on failure. */
function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; onLine?: (line: string) => void } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (stream: NodeJS.ReadableStream) => {
      const lines = createInterface({ input: stream });
      lines.on('line', (line) => {
        output += `${line}\n`;
        if (output.length > 64_000) output = output.slice(-32_000);
        options.onLine?.(line);
      });
    };
    collect(child.stdout);
    collect(child.stderr);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (code === 0) resolve(output);
      else reject(new Error(`${command} ${args.join(' ')} exited with ${signal ?? code}:\n${output.trim().split('\n').slice(-15).join('\n')}`));
    });
  });
}

async function waitUntilReady(server: ChildProcess, port: number, logFile: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null || server.signalCode !== null) throw new Error(`the server exited with ${server.signalCode ?? server.exitCode}`);
    if (/database system is ready to accept connections/.test(tail(logFile))) {
      const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
      try {
        await client.connect();
        await client.end();
        return;
      } catch {
        await client.end().catch(() => undefined);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the server did not accept connections within 60 s');
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-20).join('\n');
  } catch {
    return '';
  }
}

// ---------------------------------------------------------------------------------------------------
// A check by hand: `tsx bench/peers/postgres.ts --self-check [--rows N] [--cranfield DIR]`.

async function selfCheck(args: string[]): Promise<void> {
  const option = (name: string, fallback: string) => {
    const i = args.indexOf(name);
    return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : fallback;
  };
  const rows = Number(option('--rows', '1000'));
  const cranfieldDir = option('--cranfield', CRANFIELD_DIR);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const timed = async <T>(label: string, f: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    const value = await f();
    log(`${label}: ${(performance.now() - t).toFixed(1)} ms`);
    return value;
  };
  const assert = (ok: boolean, what: string) => {
    if (!ok) throw new Error(`self-check failed: ${what}`);
    log(`ok: ${what}`);
  };

  const peer = await timed('start', () => startPostgres(log));
  try {
    log(`version: ${peer.version}`);

    // Synthetic records: two tenants, Zipf-distributed made-up words, a few recognisable ones.
    await timed(`load ${rows} synthetic rows`, () => peer.load(synthetic(rows), (n) => n % 50_000 === 0 && log(`  loaded ${n}`)));
    const queries: [string, PeerQuery][] = [
      ['word', { q: 'invoice', limit: 10 }],
      ['phrase', { q: '"dark mode"', limit: 10 }],
      ['phrase or word', { q: '"dark mode" deploy', limit: 10 }],
      ['filtered', { q: 'invoice', agent_id: 'agent-4', type: 'fact', limit: 10 }],
      ['since', { q: 'invoice', since: '2025-01-01T00:10:00Z', limit: 10 }],
      ['no q', { limit: 5 }],
      ['stop words only', { q: 'the and of', limit: 10 }],
      ['hostile', { q: `'); DROP TABLE records; -- " & | ! <-> :* \\`, limit: 10 }],
    ];
    const results: Record<string, string[]> = {};
    for (const [label, query] of queries) {
      results[label] = await timed(`search "${label}" ${JSON.stringify(query)}`, () => peer.search('tenant-a', query));
      log(`  -> ${results[label]!.join(' ')}`);
    }
    assert(results.word!.length === 10, 'a common word finds 10 records');
    assert(results['stop words only']!.length === 0, 'a stop-word-only query finds nothing');
    assert(results.filtered!.length > 0 && results.filtered!.every((id) => Number(id.split('-')[1]) % 20 === 4 && Number(id.split('-')[1]) % 3 === 0), 'filters apply');
    assert(results.phrase!.length > 0, 'a phrase finds records');
    assert(results.since!.length > 0 && results.since!.every((id) => Number(id.split('-')[1]) >= 600), 'since applies');
    const other = await peer.search('tenant-b', { q: 'invoice', limit: 1000 });
    const mine = await peer.search('tenant-a', { q: 'invoice', limit: 1000 });
    assert(other.every((id) => id.startsWith('b-')) && mine.every((id) => id.startsWith('a-')), 'tenants are isolated');
    assert((await peer.search('tenant-c', { limit: 10 })).length === 0, 'an unknown tenant has no records');

    if (rows >= 10_000) await latency(peer, log);

    await cranfield(peer, cranfieldDir, log);
  } finally {
    await timed('stop', () => peer.stop());
  }
}

const COMMON = ['deploy', 'database', 'latency', 'cache', 'user prefers', 'dark mode', 'invoice', 'report', 'meeting', 'budget', 'review', 'release', 'incident', 'backup'];

function makeRandom(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

/** A 20 000-word made-up vocabulary with a Zipf-like frequency, plus a few common real words. */
function vocabulary(random: () => number): () => string {
  const syllables = 'ka lo mi nu pe ra si to vu ze bar den fil gor hun jas kel mor nix pol'.split(' ');
  const words = Array.from({ length: 20_000 }, (_, i) => {
    let w = '';
    let n = i + 7;
    do {
      w += syllables[n % syllables.length];
      n = Math.floor(n / syllables.length);
    } while (n > 0);
    return w;
  });
  return () => {
    if (random() < 0.05) return COMMON[Math.floor(random() * COMMON.length)]!;
    // Inverse-CDF of a 1/x distribution over the ranks.
    return words[Math.min(words.length - 1, Math.floor(Math.exp(random() * Math.log(words.length))) - 1)]!;
  };
}

function* synthetic(n: number): Generator<PeerRecord> {
  const random = makeRandom(42);
  const word = vocabulary(random);
  const text = (k: number) => Array.from({ length: k }, word).join(' ');
  const start = Date.parse('2025-01-01T00:00:00Z');
  for (let i = 0; i < n; i++) {
    const tenant = i % 2 === 0 ? 'a' : 'b';
    yield {
      tenant: `tenant-${tenant}`,
      id: `${tenant}-${i}`,
      agent_id: `agent-${i % 20}`,
      type: i % 3 === 0 ? 'fact' : 'note',
      client: i % 5 === 0 ? null : 'cli',
      created_at: new Date(start + i * 1000).toISOString(),
      title: text(8),
      body: text(60),
    };
  }
}

async function latency(peer: PostgresPeer, log: (line: string) => void): Promise<void> {
  const random = makeRandom(7);
  const word = vocabulary(random);
  for (const concurrency of [1, 32]) {
    const ms: number[] = [];
    let left = 2000;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (left-- > 0) {
          const t = performance.now();
          await peer.search(random() < 0.5 ? 'tenant-a' : 'tenant-b', { q: `${word()} ${word()}`, limit: 20 });
          ms.push(performance.now() - t);
        }
      }),
    );
    ms.sort((a, b) => a - b);
    const at = (p: number) => ms[Math.min(ms.length - 1, Math.ceil((p / 100) * ms.length) - 1)]!.toFixed(2);
    log(`two-word searches, limit 20, concurrency ${concurrency}: p50 ${at(50)} ms, p95 ${at(95)} ms, p99 ${at(99)} ms, max ${at(100)} ms`);
  }
}

/** Cranfield through the benchmark's own loader and measures (bench/quality/): nDCG@10, MAP and Recall@100. */
async function cranfield(peer: PostgresPeer, dir: string, log: (line: string) => void): Promise<void> {
  const set = cranfieldSet(dir);
  const t = performance.now();
  const result = await scoreSet(set, await loadIntoPeer(peer, set, new Date().toISOString()));
  log(`cranfield: ${set.queries.length} queries in ${(performance.now() - t).toFixed(0)} ms`);
  console.log(JSON.stringify({ engine: peer.version, cranfield: result }));
}

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
