import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { ForgetInput, ListQuery, MemoryClient, RecallQuery, RecordInput, RecordPatch, RecordType } from '../sdk/src/index.js';
import { ConfigError, createClient, errorBody, loadApiConfig, type ErrorJson } from '../mcp/api.js';
import { SEARCH_LIMIT_RANGE } from '../shared/domain/limits.js';
import { EXPORT_PAGE, exportRecords, STREAMED } from './export.js';
import { HELP } from './help.js';
import { nodeFetch } from './node-fetch.js';

/**
 * `npm run --silent memory -- <command>`: remember, recall, classify, read, update, list, delete, forget,
 * export and the month's usage from a shell, through the SDK. Every command but export prints the API's JSON answer on stdout; export
 * streams every record as NDJSON. Errors print `{"error", "message"}` on stderr and exit with 1, or 2 for a
 * malformed command.
 */

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

/** --if-version: a version as `get` printed it, an integer of 1 or more. */
function versionOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9]\d{0,15}$/.test(value)) throw usage('--if-version must be a record version: an integer of 1 or more');
  return Number(value);
}

function limitOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw usage(`--limit must be an integer from ${SEARCH_LIMIT_RANGE}`);
  return Number(value);
}

/** `--min-rank` as a number; whether it is from 0 to 1 is the API's to say (400 invalid_min_rank). */
function minRankOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(value)) throw usage('--min-rank must be a number from 0 to 1');
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
        'no-client': { type: 'boolean' },
        'no-metadata': { type: 'boolean' },
        'if-version': { type: 'string' },
        supersedes: { type: 'string', multiple: true },
        'include-superseded': { type: 'boolean' },
        'idempotency-key': { type: 'string' },
        since: { type: 'string' },
        until: { type: 'string' },
        'min-rank': { type: 'string' },
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
  /** --include-superseded, as the API's parameter. */
  const superseded = () => (values['include-superseded'] ? { include_superseded: true } : {});
  /** The filters of a listing or an export, as given. */
  const filters = (): ListQuery => {
    const agentId = agent();
    return {
      ...(agentId === undefined ? {} : { agent_id: agentId }),
      ...(values.type === undefined ? {} : { type: values.type as RecordType }),
      ...(values.client === undefined ? {} : { client: values.client }),
      ...(values.since === undefined ? {} : { since: values.since }),
      ...(values.until === undefined ? {} : { until: values.until }),
      ...superseded(),
    };
  };
  /** A field of an update: its option's value, or null with --no-<name>; both at once is a usage error. */
  const setOrRemove = <T>(name: 'client' | 'metadata', value: T | undefined): { [field: string]: T | null } => {
    const remove = values[`no-${name}`] === true;
    if (remove && values[name] !== undefined) throw usage(`give --${name} or --no-${name}, not both`);
    if (remove) return { [name]: null };
    return value === undefined ? {} : { [name]: value };
  };

  let call: (client: MemoryClient) => Promise<unknown>;
  switch (command) {
    case 'remember': {
      options(['agent', 'type', 'title', 'body', 'client', 'metadata', 'supersedes', 'idempotency-key']);
      const record = {
        agent_id: agent() ?? required(values, 'agent', command),
        type: required(values, 'type', command) as RecordInput['type'],
        title: required(values, 'title', command),
        body: bodyOf(required(values, 'body', command), stdin),
        ...(values.client === undefined ? {} : { client: values.client }),
        ...(values.metadata === undefined ? {} : { metadata: metadataOf(values.metadata) }),
        ...(values.supersedes === undefined ? {} : { supersedes: values.supersedes }),
      };
      const key = values['idempotency-key'];
      call = (client) => client.remember(record, key === undefined ? {} : { idempotencyKey: key });
      break;
    }
    case 'recall': {
      const words = options(['type', 'agent', 'client', 'since', 'until', 'limit', 'include-superseded', 'min-rank'], 'words');
      const agentId = agent();
      const query: RecallQuery = {
        ...(words === '' ? {} : { q: words }),
        ...(values.type === undefined ? {} : { type: values.type as RecallQuery['type'] }),
        ...(agentId === undefined ? {} : { agent_id: agentId }),
        ...(values.client === undefined ? {} : { client: values.client }),
        ...(values.since === undefined ? {} : { since: values.since }),
        ...(values.until === undefined ? {} : { until: values.until }),
        ...(values.limit === undefined ? {} : { limit: limitOf(values.limit) }),
        ...(values['min-rank'] === undefined ? {} : { min_rank: minRankOf(values['min-rank'])! }),
        ...superseded(),
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
    case 'update': {
      const id = options(['title', 'body', 'type', 'client', 'no-client', 'metadata', 'no-metadata', 'if-version'], 'id');
      const patch: RecordPatch = {
        ...(values.title === undefined ? {} : { title: values.title }),
        ...(values.body === undefined ? {} : { body: bodyOf(values.body, stdin) }),
        ...(values.type === undefined ? {} : { type: values.type as RecordType }),
        ...setOrRemove('client', values.client),
        ...setOrRemove('metadata', metadataOf(values.metadata)),
      };
      if (Object.keys(patch).length === 0) throw usage('update needs at least one of --title, --body, --type, --client, --no-client, --metadata, --no-metadata');
      const ifVersion = versionOf(values['if-version']);
      call = (client) => client.update(id, patch, ifVersion === undefined ? {} : { ifVersion });
      break;
    }
    case 'list': {
      options(['agent', 'type', 'client', 'since', 'until', 'include-superseded', 'order', 'limit', 'cursor']);
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
      options(['agent', 'type', 'client', 'since', 'until', 'include-superseded', 'progress']);
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
      call = (client) => client.usage({ include: 'key' });
      break;
    }
    default:
      throw usage(`unknown command: ${command}\n\n${HELP}`);
  }

  const config = loadApiConfig(env);
  try {
    return await call(createClient(config, nodeFetch));
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
    if (result === STREAMED) return;
    process.stdout.write(typeof result === 'string' ? `${result}\n` : `${JSON.stringify(result, null, 2)}\n`);
  },
  (error: unknown) => {
    const { body, exitCode } = failure(error);
    process.stderr.write(`${JSON.stringify(body)}\n`);
    process.exitCode = exitCode;
  },
);
