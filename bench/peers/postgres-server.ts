/**
 * Starts and stops the peer's PostgreSQL 15 server: a throwaway one on a fresh data directory, listening on
 * 127.0.0.1 and a free port, run as the `postgres` user when we are root, removed when it stops or the
 * process exits.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, chownSync, closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../../local/free-port.js';
import { ensurePostgres } from './postgres-install.js';
import { Peer, SCHEMA, type PostgresPeer } from './postgres-peer.js';
import { run } from './run-command.js';

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
