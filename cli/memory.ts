import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { ForgetInput, ListQuery, MemoryClient, RecallQuery, RecordInput, RecordType } from '../sdk/src/index.js';
import { ConfigError, createClient, DEFAULT_API_URL, errorBody, loadApiConfig, type ErrorJson } from '../mcp/api.js';
import { LIMITS, SEARCH_LIMIT_RANGE } from '../shared/domain/limits.js';

/**
 * `npm run --silent memory -- <command>`: remember, recall, classify, read, list, delete, forget, export and
 * the month's usage from a shell, through the SDK. Every command but export prints the API's JSON answer on stdout; export
 * streams every record as NDJSON. Errors print `{"error", "message"}` on stderr and exit with 1, or 2 for a
 * malformed command.
 */

const HELP = `Usage: npm run --silent memory -- <command> [options]

  remember --agent <id> --type <type> --title <text> --body <text | -> [--client <c>] [--metadata <json>]
           [--idempotency-key <key>]
  recall [<words>...] [--type <type>] [--agent <id>] [--client <c>] [--since <date>] [--limit <n>]
  classify --title <text> --body <text | ->
  get <id>
  list [--agent <id>] [--type <type>] [--client <c>] [--since <date>] [--until <date>] [--order desc|asc]
       [--limit <n>] [--cursor <next_cursor>]
  export [--agent <id>] [--type <type>] [--client <c>] [--since <date>] [--until <date>] [--progress]
  delete <id>
  forget [--agent <id>] [--client <c>] [--type <type>] [--before <date>] [--id <id>]... [--dry-run]
  forget-status <job_id>
  usage

  --body -     reads the body from stdin
  --agent-id   the same as --agent
  types        fact, decision, exchange, deliverable, open_item, signal (see docs/api.md)
  recall       free English text, best match first; without words, the newest records first
  list         one page, newest first (--order asc: oldest first), as the API answers it:
               {"records": [...], "next_cursor": ...}; pass --cursor <next_cursor> for the next page
  export       every record the filters keep, oldest first, one JSON object a line (NDJSON), streamed
               page by page; in a terminal, a progress line on stderr after the first second
               (--progress: a line after every page, wherever stderr goes)
  forget       deletes every record that matches all the selectors given (at least one); --dry-run only
               counts them. A large forget on AWS answers {"job_id", "matched"}: see forget-status
  usage        this month's records and searches against the quotas, what is left, and the key's rate
               limit (UTC month); counts against neither quota

Every command but export prints the API's JSON answer on stdout. Errors print {"error", "message"} on
stderr and exit with 1 (2 for a malformed command; the codes are the API's, plus timeout and
connection_failed). An export that fails midway has written the records before the error.

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
  if (!/^\d+$/.test(value)) throw usage(`--limit must be an integer from ${SEARCH_LIMIT_RANGE}`);
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
        'agent-id': { type: 'string' },
        type: { type: 'string' },
        title: { type: 'string' },
        body: { type: 'string' },
        client: { type: 'string' },
        metadata: { type: 'string' },
        'idempotency-key': { type: 'string' },
        since: { type: 'string' },
        until: { type: 'string' },
        order: { type: 'string' },
        limit: { type: 'string' },
        cursor: { type: 'string' },
        before: { type: 'string' },
        id: { type: 'string', multiple: true },
        'dry-run': { type: 'boolean' },
        progress: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw usage(`${(error as Error).message}\n\n${HELP}`);
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === 'help') return HELP;

  /** Checks the options the command takes, and its arguments: `words` for recall, one `name` or none. */
  const options = (allowed: string[], positional: 'none' | 'words' | string = 'none'): string => {
    const extra = Object.keys(values).filter((name) => !allowed.includes(name) && !(name === 'agent-id' && allowed.includes('agent')));
    if (extra.length > 0) throw usage(`${command} does not take ${extra.map((n) => `--${n}`).join(', ')}`);
    if (positional === 'words') return rest.join(' ');
    if (positional === 'none') {
      if (rest.length > 0) throw usage(`${command} takes no arguments, only options: ${rest.join(' ')}`);
      return '';
    }
    if (rest.length !== 1 || rest[0] === '') throw usage(`${command} takes one argument: ${command} <${positional}>`);
    return rest[0]!;
  };
  /** --agent, or its other spelling --agent-id. */
  const agent = (): string | undefined => {
    if (values.agent !== undefined && values['agent-id'] !== undefined) throw usage('give --agent or --agent-id, not both');
    return values.agent ?? values['agent-id'];
  };
  /** The filters of a listing or an export, as given. */
  const filters = (): ListQuery => {
    const agentId = agent();
    return {
      ...(agentId === undefined ? {} : { agent_id: agentId }),
      ...(values.type === undefined ? {} : { type: values.type as RecordType }),
      ...(values.client === undefined ? {} : { client: values.client }),
      ...(values.since === undefined ? {} : { since: values.since }),
      ...(values.until === undefined ? {} : { until: values.until }),
    };
  };

  let call: (client: MemoryClient) => Promise<unknown>;
  switch (command) {
    case 'remember': {
      options(['agent', 'type', 'title', 'body', 'client', 'metadata', 'idempotency-key']);
      const record = {
        agent_id: agent() ?? required(values, 'agent', command),
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
      const words = options(['type', 'agent', 'client', 'since', 'limit'], 'words');
      const agentId = agent();
      const query: RecallQuery = {
        ...(words === '' ? {} : { q: words }),
        ...(values.type === undefined ? {} : { type: values.type as RecallQuery['type'] }),
        ...(agentId === undefined ? {} : { agent_id: agentId }),
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
    case 'get': {
      const id = options([], 'id');
      call = (client) => client.get(id);
      break;
    }
    case 'list': {
      options(['agent', 'type', 'client', 'since', 'until', 'order', 'limit', 'cursor']);
      const query: ListQuery = {
        ...filters(),
        ...(values.order === undefined ? {} : { order: values.order as ListQuery['order'] }),
        ...(values.limit === undefined ? {} : { limit: limitOf(values.limit) }),
        ...(values.cursor === undefined ? {} : { cursor: values.cursor }),
      };
      call = (client) => client.listPage(query);
      break;
    }
    case 'export': {
      options(['agent', 'type', 'client', 'since', 'until', 'progress']);
      const query: ListQuery = { ...filters(), order: 'asc', limit: EXPORT_PAGE };
      const progress = values.progress === true ? 'every-page' : process.stderr.isTTY ? 'terminal' : 'off';
      call = (client) => exportRecords(client, query, progress);
      break;
    }
    case 'delete': {
      const id = options([], 'id');
      call = (client) => client.delete(id);
      break;
    }
    case 'forget': {
      options(['agent', 'client', 'type', 'before', 'id', 'dry-run']);
      const agentId = agent();
      const input = {
        ...(agentId === undefined ? {} : { agent_id: agentId }),
        ...(values.client === undefined ? {} : { client: values.client }),
        ...(values.type === undefined ? {} : { type: values.type as ForgetInput['type'] }),
        ...(values.before === undefined ? {} : { before: values.before }),
        ...(values.id === undefined ? {} : { ids: values.id }),
        ...(values['dry-run'] ? { dry_run: true } : {}),
      };
      call = (client) => client.forget(input);
      break;
    }
    case 'forget-status': {
      const jobId = options([], 'job_id');
      call = (client) => client.forgetStatus(jobId);
      break;
    }
    case 'usage': {
      options([]);
      call = (client) => client.usage();
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

/** What export returns: it wrote its records itself, so there is nothing more to print. */
const STREAMED = Symbol('streamed');

/** Records per page of an export: the API's largest page. */
const EXPORT_PAGE = LIMITS.searchLimitMax;

/** How often a progress line is rewritten in a terminal, and how long an export runs before the first. */
const PROGRESS_MS = 1000;

/**
 * Writes every record of the listing to stdout as NDJSON, a page at a time, oldest first: the SDK's
 * iterator holds one page, and a full pipe is waited for ('drain'), so an export of any size takes the
 * memory of one page. A reader that goes away (`| head`) ends it quietly. Progress goes to stderr: in a
 * terminal one line rewritten each second once the export has run a second, with `--progress` one line
 * per page wherever stderr goes; else nothing, so that stderr stays the JSON of an error for scripts.
 */
async function exportRecords(client: MemoryClient, query: ListQuery, progress: 'off' | 'terminal' | 'every-page'): Promise<typeof STREAMED> {
  const out = process.stdout;
  // A reader that went away (EPIPE) ends the export; any other failure of stdout is thrown after the loop.
  let closed = false;
  let failed: Error | undefined;
  out.on('error', (error: NodeJS.ErrnoException) => {
    closed = true;
    if (error.code !== 'EPIPE') failed ??= error;
  });
  /** Waits until the pipe takes more, or is gone. */
  const drained = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        out.off('drain', done).off('close', done).off('error', done);
        resolve();
      };
      out.on('drain', done).on('close', done).on('error', done);
    });
  const started = Date.now();
  let count = 0;
  let shown = false;
  let lastShown = started;
  const line = (done: boolean) => {
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    return done ? `export: ${count} records in ${seconds} s` : `export: ${count} records so far (${seconds} s)`;
  };
  const show = (done: boolean) => {
    if (progress === 'terminal') process.stderr.write(`\r\x1b[2K${line(done)}${done ? '\n' : ''}`);
    else process.stderr.write(`${line(done)}\n`);
    shown = true;
  };
  try {
    for await (const record of client.list(query)) {
      if (closed) break;
      count++;
      if (!out.write(`${JSON.stringify(record)}\n`)) await drained();
      const now = Date.now();
      if (progress === 'every-page' ? count % EXPORT_PAGE === 0 : progress === 'terminal' && now - lastShown >= PROGRESS_MS) {
        show(false);
        lastShown = now;
      }
    }
  } catch (error) {
    if (shown && progress === 'terminal') process.stderr.write('\n');
    throw error;
  }
  if (failed) throw failed;
  if (shown || progress === 'every-page') show(true);
  return STREAMED;
}

/** What a failure prints on stderr, and the exit code. */
function failure(error: unknown): { body: Record<string, unknown>; exitCode: number } {
  if (error instanceof CallFailed) return { body: { ...error.body }, exitCode: 1 };
  if (error instanceof ConfigError) return { body: { error: error.exitCode === 2 ? 'usage' : 'config', message: error.message }, exitCode: error.exitCode };
  return { body: { error: 'error', message: error instanceof Error ? error.message : String(error) }, exitCode: 1 };
}

memoryCommand(process.argv.slice(2), process.env, () => readFileSync(0, 'utf8')).then(
  (result) => {
    if (result === STREAMED) return;
    process.stdout.write(typeof result === 'string' ? `${result}\n` : `${JSON.stringify(result, null, 2)}\n`);
  },
  (error: unknown) => {
    const { body, exitCode } = failure(error);
    process.stderr.write(`${JSON.stringify(body)}\n`);
    process.exitCode = exitCode;
  },
);
