import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { MemoryClient, RecallQuery, RecordInput } from '../sdk/src/index.js';
import { ConfigError, createClient, DEFAULT_API_URL, errorBody, loadApiConfig, type ErrorJson } from '../mcp/api.js';

/**
 * `npm run --silent memory -- <command>`: remember, recall and classify from a shell, through the SDK.
 * Every command prints the API's JSON answer on stdout. Errors print `{"error", "message"}` on stderr and
 * exit with 1, or 2 for a malformed command.
 */

const HELP = `Usage: npm run --silent memory -- <command> [options]

  remember --agent <id> --type <type> --title <text> --body <text | -> [--client <c>] [--metadata <json>]
           [--idempotency-key <key>]
  recall [<words>...] [--type <type>] [--agent <id>] [--client <c>] [--since <date>] [--limit <n>]
  classify --title <text> --body <text | ->

  --body -     reads the body from stdin
  types        fact, decision, exchange, deliverable, open_item, signal (see docs/api.md)
  recall       free English text, best match first; without words, the newest records first

Every command prints the API's JSON answer on stdout. Errors print {"error", "message"} on stderr and exit
with 1 (2 for a malformed command; the codes are the API's, plus timeout and connection_failed).

Environment:
  MEMORY_API_URL   the memory API (default ${DEFAULT_API_URL}, the local server; or the API Gateway stage URL)
  MEMORY_API_KEY   an API key of the service (mem_…), required`;

const usage = (message: string) => new ConfigError(message, 2);

/** The value of a required option; a usage error when it is absent. */
function required(values: Record<string, unknown>, name: string, command: string): string {
  const value = values[name];
  if (typeof value !== 'string') throw usage(`${command} needs --${name}`);
  return value;
}

/** `--body -` reads the body from stdin, all of it, as UTF-8. */
function bodyOf(value: string, stdin: () => string): string {
  return value === '-' ? stdin() : value;
}

function metadataOf(value: string | undefined): RecordInput['metadata'] {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value) as RecordInput['metadata'];
  } catch (error) {
    throw usage(`--metadata must be JSON (${(error as Error).message})`);
  }
}

function limitOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw usage('--limit must be an integer from 1 to 100');
  return Number(value);
}

/** A call the API refused, or that got no answer: printed as JSON on stderr, exit code 1. */
class CallFailed extends Error {
  constructor(readonly body: ErrorJson) {
    super(body.message);
  }
}

/** Runs one command and returns what it prints: the API's answer, or the help text. `stdin` reads all of stdin. */
async function memoryCommand(argv: string[], env: NodeJS.ProcessEnv, stdin: () => string): Promise<unknown> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        agent: { type: 'string' },
        type: { type: 'string' },
        title: { type: 'string' },
        body: { type: 'string' },
        client: { type: 'string' },
        metadata: { type: 'string' },
        'idempotency-key': { type: 'string' },
        since: { type: 'string' },
        limit: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw usage(`${(error as Error).message}\n\n${HELP}`);
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === 'help') return HELP;

  const options = (allowed: string[]) => {
    const extra = Object.keys(values).filter((name) => !allowed.includes(name));
    if (extra.length > 0) throw usage(`${command} does not take ${extra.map((n) => `--${n}`).join(', ')}`);
    if (command !== 'recall' && rest.length > 0) throw usage(`${command} takes no arguments, only options: ${rest.join(' ')}`);
  };

  let call: (client: MemoryClient) => Promise<unknown>;
  switch (command) {
    case 'remember': {
      options(['agent', 'type', 'title', 'body', 'client', 'metadata', 'idempotency-key']);
      const record = {
        agent_id: required(values, 'agent', command),
        type: required(values, 'type', command) as RecordInput['type'],
        title: required(values, 'title', command),
        body: bodyOf(required(values, 'body', command), stdin),
        ...(values.client === undefined ? {} : { client: values.client }),
        ...(values.metadata === undefined ? {} : { metadata: metadataOf(values.metadata) }),
      };
      const key = values['idempotency-key'];
      call = (client) => client.remember(record, key === undefined ? {} : { idempotencyKey: key });
      break;
    }
    case 'recall': {
      options(['type', 'agent', 'client', 'since', 'limit']);
      const query: RecallQuery = {
        ...(rest.length === 0 ? {} : { q: rest.join(' ') }),
        ...(values.type === undefined ? {} : { type: values.type as RecallQuery['type'] }),
        ...(values.agent === undefined ? {} : { agent_id: values.agent }),
        ...(values.client === undefined ? {} : { client: values.client }),
        ...(values.since === undefined ? {} : { since: values.since }),
        ...(values.limit === undefined ? {} : { limit: limitOf(values.limit) }),
      };
      call = (client) => client.recall(query);
      break;
    }
    case 'classify': {
      options(['title', 'body']);
      const input = { title: required(values, 'title', command), body: bodyOf(required(values, 'body', command), stdin) };
      call = (client) => client.classify(input);
      break;
    }
    default:
      throw usage(`unknown command: ${command}\n\n${HELP}`);
  }

  const config = loadApiConfig(env);
  try {
    return await call(createClient(config));
  } catch (error) {
    throw new CallFailed(errorBody(error, config.url));
  }
}

/** What a failure prints on stderr, and the exit code. */
function failure(error: unknown): { body: Record<string, unknown>; exitCode: number } {
  if (error instanceof CallFailed) return { body: { ...error.body }, exitCode: 1 };
  if (error instanceof ConfigError) return { body: { error: error.exitCode === 2 ? 'usage' : 'config', message: error.message }, exitCode: error.exitCode };
  return { body: { error: 'error', message: error instanceof Error ? error.message : String(error) }, exitCode: 1 };
}

memoryCommand(process.argv.slice(2), process.env, () => readFileSync(0, 'utf8')).then(
  (result) => {
    process.stdout.write(typeof result === 'string' ? `${result}\n` : `${JSON.stringify(result, null, 2)}\n`);
  },
  (error: unknown) => {
    const { body, exitCode } = failure(error);
    process.stderr.write(`${JSON.stringify(body)}\n`);
    process.exitCode = exitCode;
  },
);
