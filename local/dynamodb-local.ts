import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { dynamoDbClient } from '../shared/adapters/aws/dynamodb/client.js';
import { freePort } from './free-port.js';

/** A running DynamoDB Local. */
export interface DynamoDbLocal {
  endpoint: string;
  stop(): Promise<void>;
}

/** Why DynamoDB Local cannot start on this machine, or null when it can (Java is on the PATH). */
export function dynamoDbLocalUnavailable(): string | null {
  const java = spawnSync('java', ['-version'], { stdio: 'ignore' });
  return java.error || java.status !== 0 ? 'Java is not installed (DynamoDB Local needs Java 17 or later on the PATH)' : null;
}

/** The folder of AWS's DynamoDB Local jar, as the amplify-dynamodb-simulator package ships it. */
function emulatorDir(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('amplify-dynamodb-simulator/package.json')), 'emulator');
}

/**
 * Starts DynamoDB Local in memory on a free port (or the given one) and waits until it answers.
 * One shared database for every credential and region, so the server and the admin CLI see the same tables.
 */
export async function startDynamoDbLocal(options: { port?: number; timeoutMs?: number } = {}): Promise<DynamoDbLocal> {
  const unavailable = dynamoDbLocalUnavailable();
  if (unavailable) throw new Error(unavailable);
  const port = options.port ?? (await freePort());
  const dir = emulatorDir();
  // The emulator writes a metadata file into its working directory, even in memory: give it its own.
  const workDir = mkdtempSync(join(tmpdir(), 'dynamodb-local-'));
  const child: ChildProcess = spawn(
    'java',
    ['-Xmx512m', `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`, '-jar', join(dir, 'DynamoDBLocal.jar'), '-inMemory', '-sharedDb', '-port', String(port)],
    { stdio: ['ignore', 'ignore', 'pipe'], cwd: workDir },
  );
  child.once('exit', () => rmSync(workDir, { recursive: true, force: true }));
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };

  const client = dynamoDbClient({ region: 'us-east-1', dynamodbEndpoint: endpoint });
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`DynamoDB Local exited with code ${child.exitCode}: ${stderr.trim()}`);
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        return { endpoint, stop };
      } catch {
        if (Date.now() > deadline) throw new Error(`DynamoDB Local did not answer on ${endpoint} in time: ${stderr.trim()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } catch (error) {
    await stop();
    throw error;
  } finally {
    client.destroy();
  }
}

// `npm run dynamodb-local [-- --port N]`: runs DynamoDB Local until Ctrl-C, for the AWS-shaped local mode.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const at = process.argv.indexOf('--port');
  const port = at > 0 ? Number(process.argv[at + 1]) : 8000;
  const ddb = await startDynamoDbLocal({ port });
  process.stdout.write(
    `DynamoDB Local is running in memory at ${ddb.endpoint}\n` +
      `Start the service on it with:\n  MEMORY_BACKEND=dynamodb DYNAMODB_ENDPOINT=${ddb.endpoint} npm start\n`,
  );
  const shutdown = () => void ddb.stop().then(() => process.exit(0));
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}
