/**
 * The admin CLI (`npm run admin`): runs one command on the configured backend's stores and prints its
 * result as JSON. Its parts: the help (admin-help.ts), the command line (admin-command-line.ts), the
 * commands (admin-commands.ts) with API Gateway's side of keys (admin-gateway-keys.ts), tenant delete
 * (admin-tenant-delete.ts), export and import (admin-records.ts), backup and restore (admin-backup.ts),
 * and its streams (admin-io.ts).
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CliError, usage } from './admin-cli-error.js';
import { parseCommandLine } from './admin-command-line.js';
import { requireSqliteBackend } from './admin-backup.js';
import { COMMAND_HANDLERS, FILE_COMMAND_HANDLERS } from './admin-commands.js';
import { ADMIN_HELP } from './admin-help.js';
import { importInput, jsonLine, processIo, type AdminIo, type ImportInput } from './admin-io.js';
import type { AdminStores } from './backend.js';
import { NoDatabaseError, openAdminStores } from './backends.js';
import { loadConfig, type LocalConfig } from './config.js';

export { CliError } from './admin-cli-error.js';
export type { AdminIo } from './admin-io.js';

/**
 * The directory the command was run in, which a relative --to, --from or --file is from: `npm run admin`
 * runs the script in the package's directory and keeps the caller's in INIT_CWD. Only for that script: an
 * INIT_CWD inherited from another (say `npm test`, whose children run elsewhere) is not this command's.
 */
function callerDirectory(env: NodeJS.ProcessEnv): string {
  return env.npm_lifecycle_event === 'admin' && env.INIT_CWD ? env.INIT_CWD : process.cwd();
}

/** Runs one admin command on the stores `open` gives and returns what it prints (undefined: nothing more). */
export async function adminCommand(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  open: (config: LocalConfig, options: { create: boolean }) => Promise<AdminStores> = openAdminStores,
  io: AdminIo = processIo(),
): Promise<unknown> {
  const line = parseCommandLine(argv, callerDirectory(env));
  if (line.help) return ADMIN_HELP;
  const { command } = line;
  const fileCommand = FILE_COMMAND_HANDLERS[command];
  // Before the configuration: on DynamoDB the refusal says what backs it up, whatever else is set.
  if (fileCommand) requireSqliteBackend(command, line.backend ?? env.MEMORY_BACKEND);

  let config: LocalConfig;
  try {
    config = loadConfig(line.backend === undefined ? env : { ...env, MEMORY_BACKEND: line.backend });
  } catch (error) {
    throw new CliError('invalid_configuration', (error as Error).message);
  }
  const progress = (text: string) => jsonLine(io.stderr, { progress: text });
  // backup and restore open no stores: the one reads the file as a snapshot, the other needs it absent.
  if (fileCommand) return await fileCommand({ line, config, progress });
  if (line.create && config.aws && !config.aws.dynamodbEndpoint) {
    throw usage('--create makes tables on DynamoDB Local only (DYNAMODB_ENDPOINT); on AWS the stack makes them (cdk deploy)');
  }
  // An import's input is found before anything is opened: a mistyped path or a forgotten pipe changes nothing.
  let input: ImportInput | null = null;
  if (command === 'import') input = await importInput(line.file, io.stdin);
  let stores: AdminStores;
  try {
    stores = await open(config, { create: line.create });
  } catch (error) {
    await input?.close();
    if (error instanceof NoDatabaseError) throw new CliError('no_database', error.message, 1, error.details);
    throw error;
  }
  // Every handler awaits what it returns, and so does this: the stores close in `finally`, which would not
  // wait for a promise returned as it is.
  try {
    const handler = COMMAND_HANDLERS[command];
    if (handler === undefined) throw new Error(`no handler for ${command}`);
    return await handler({ line, config, stores, io, progress, input });
  } catch (error) {
    // On AWS nothing checks the tables before a command runs (openAdminStores); a missing one shows here.
    if (config.aws && (error as Error).name === 'ResourceNotFoundException') {
      throw new CliError(
        'no_database',
        `a table named in MEMORY_*_TABLE does not exist in AWS ${config.aws.region} (${(error as Error).message}). ` +
          "Deploy the stack (cdk deploy), or set the MEMORY_*_TABLE names to the tables in the stack's outputs.",
      );
    }
    throw error;
  } finally {
    await input?.close();
    stores.close();
  }
}

/** True when this module is the program (`npm run admin`, compiled or from source), not one a test imported. */
function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  // The CLI's stderr carries only JSON lines; the AWS SDK's notice that it will need Node 22 from 2027
  // would break that (the README says so once instead).
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const print = (result: unknown) => {
    if (result !== undefined) process.stdout.write(typeof result === 'string' ? `${result}\n` : `${JSON.stringify(result, null, 2)}\n`);
  };
  adminCommand(process.argv.slice(2)).then(print, (error: unknown) => {
    const cli = error instanceof CliError ? error : null;
    if (cli?.output !== undefined) print(cli.output);
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`${JSON.stringify({ error: cli?.code ?? 'error', message, ...cli?.details })}\n`);
    process.exitCode = cli?.exitCode ?? 1;
  });
}
