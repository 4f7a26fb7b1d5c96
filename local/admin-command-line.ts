/** The admin CLI's command line: the commands, the options each takes, and every value checked and converted. */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { isQuotaMonth, quotaMonth } from '../shared/domain/quota-month.js';
import { LIMITS } from '../shared/domain/record.js';
import { parseSince } from '../shared/domain/since.js';
import { SCOPES, scopesOf, type Scope } from '../shared/domain/tenant.js';
import { codePoints, isBlank } from '../shared/domain/text.js';
import { usage } from './admin-cli-error.js';
import { ADMIN_HELP } from './admin-help.js';

function count(name: string, value: string | undefined, allowZero: boolean): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || (!allowZero && n === 0)) {
    throw usage(`--${name} must be a ${allowZero ? 'non-negative' : 'positive'} integer`);
  }
  return n;
}

function rate(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || n <= 0) throw usage('--rate must be a positive number of requests per second');
  return n;
}

/** Every option parseArgs knows; which command takes which is in COMMANDS. */
const OPTIONS = {
  name: { type: 'string' },
  tenant: { type: 'string' },
  month: { type: 'string' },
  'record-quota': { type: 'string' },
  'query-quota': { type: 'string' },
  rate: { type: 'string' },
  burst: { type: 'string' },
  file: { type: 'string' },
  scope: { type: 'string' },
  agent: { type: 'string' },
  'expires-in': { type: 'string' },
  'expires-at': { type: 'string' },
  confirm: { type: 'boolean' },
  to: { type: 'string' },
  from: { type: 'string' },
  force: { type: 'boolean' },
  backend: { type: 'string' },
  create: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;
type OptionName = keyof typeof OPTIONS;

/** Options every command takes. */
const GLOBAL_OPTIONS: readonly OptionName[] = ['backend', 'create', 'help'];

/** The options that set a tenant's name and limits. */
const TENANT_FIELDS: readonly OptionName[] = ['name', 'record-quota', 'query-quota', 'rate', 'burst'];

/** The commands: the options each takes, those it needs (with their placeholder), and the one argument `key revoke` needs. */
const COMMANDS: Record<string, { options: readonly OptionName[]; required?: Partial<Record<OptionName, string>>; argument?: string }> = {
  'tenant create': { options: TENANT_FIELDS, required: { name: '<name>' } },
  'tenant update': { options: ['tenant', ...TENANT_FIELDS], required: { tenant: '<tenant_id>' } },
  'tenant delete': { options: ['tenant', 'confirm'], required: { tenant: '<tenant_id>' } },
  'tenant list': { options: [] },
  'key create': { options: ['tenant', 'rate', 'burst', 'scope', 'agent', 'expires-in', 'expires-at'], required: { tenant: '<tenant_id>' } },
  'key revoke': { options: [], argument: '<api_key or key_id>' },
  'key list': { options: ['tenant'], required: { tenant: '<tenant_id>' } },
  usage: { options: ['tenant', 'month'] },
  export: { options: ['tenant'], required: { tenant: '<tenant_id>' } },
  import: { options: ['tenant', 'file'], required: { tenant: '<tenant_id>' } },
  backup: { options: ['to', 'force'], required: { to: '<file>' } },
  restore: { options: ['from'], required: { from: '<file>' } },
};

/** The commands that copy the database file, which no --create can make: they open no stores (admin-backup.ts). */
const FILE_COMMANDS = ['backup', 'restore'];

/** The longest tenant name, in characters. */
const NAME_MAX = 100;

/**
 * `--rate -1` as `--rate=-1`: parseArgs reads a value that starts with a dash as a possible option and
 * refuses it as ambiguous; a negative number is a value, and validation then refuses it by name.
 */
function joinNegativeValues(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') return [...out, ...argv.slice(i)];
    const option = arg.startsWith('--') ? OPTIONS[arg.slice(2) as OptionName] : undefined;
    const next = argv[i + 1];
    if (option?.type === 'string' && next !== undefined && /^-[\d.]/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/**
 * The command line as a command, its argument and its options; every malformed command line is a usage
 * error. The files it names (`--file`, `--to`, `--from`) are made absolute from `cwd`, the directory the
 * command was run in.
 */
export function parseCommandLine(argv: string[], cwd: string = process.cwd()) {
  let parsed;
  try {
    parsed = parseArgs({ args: joinNegativeValues(argv), allowPositionals: true, strict: true, options: OPTIONS, tokens: true });
  } catch (error) {
    throw usage(`${(error as Error).message} (see --help)`);
  }
  const { values, positionals, tokens } = parsed;
  // parseArgs keeps the last of a repeated option: `--scope read --scope write` would make a write-only key.
  const given = tokens.flatMap((token) => (token.kind === 'option' ? [token.name] : []));
  const repeated = [...new Set(given.filter((name, i) => given.indexOf(name) !== i))];
  if (repeated.length > 0) {
    const hint = repeated.includes('scope') ? '; --scope takes a comma list, e.g. --scope read,write' : '';
    throw usage(`${repeated.map((o) => `--${o}`).join(', ')} given more than once: give each option once${hint}`);
  }
  if (values.help || positionals.length === 0) return { help: true as const };
  const command = COMMANDS[positionals[0]!] ? positionals[0]! : positionals.slice(0, 2).join(' ');
  const spec = COMMANDS[command];
  if (spec === undefined) throw usage(`unknown command: ${positionals.join(' ')}\n\n${ADMIN_HELP}`);
  const rest = positionals.slice(command.split(' ').length);
  if (spec.argument === undefined && rest.length > 0) throw usage(`${command} takes no arguments, but was given: ${rest.join(' ')}`);
  if (spec.argument !== undefined && rest.length !== 1) throw usage(`${command} needs exactly one argument, ${spec.argument}`);
  const stray = (Object.keys(values) as OptionName[]).filter((o) => !GLOBAL_OPTIONS.includes(o) && !spec.options.includes(o));
  if (stray.length > 0) throw usage(`${command} does not take ${stray.map((o) => `--${o}`).join(', ')}`);
  if (values.backend !== undefined && values.backend !== 'sqlite' && values.backend !== 'dynamodb') {
    throw usage('--backend must be sqlite or dynamodb');
  }
  for (const [option, placeholder] of Object.entries(spec.required ?? {})) {
    if (values[option as OptionName] === undefined) throw usage(`--${option} ${placeholder} is required`);
  }
  if (command === 'tenant update' && TENANT_FIELDS.every((o) => values[o] === undefined)) {
    throw usage(`tenant update needs at least one of ${TENANT_FIELDS.map((o) => `--${o}`).join(', ')}`);
  }
  if (values.create && FILE_COMMANDS.includes(command)) throw usage(`${command} does not take --create`);
  for (const option of ['file', 'to', 'from'] as const) if (values[option] === '') throw usage(`--${option} must name a file`);
  const month = values.month ?? quotaMonth(new Date());
  if (!isQuotaMonth(month)) throw usage('--month must be YYYY-MM');
  return {
    help: false as const,
    command,
    argument: rest[0],
    backend: values.backend,
    create: values.create === true,
    tenant: values.tenant,
    file: values.file === undefined ? undefined : resolve(cwd, values.file),
    to: values.to === undefined ? undefined : resolve(cwd, values.to),
    from: values.from === undefined ? undefined : resolve(cwd, values.from),
    force: values.force === true,
    confirm: values.confirm === true,
    month,
    name: values.name === undefined ? undefined : tenantName(values.name),
    recordQuota: count('record-quota', values['record-quota'], true),
    queryQuota: count('query-quota', values['query-quota'], true),
    rate: rate(values.rate),
    burst: count('burst', values.burst, false),
    scopes: values.scope === undefined ? undefined : scopeList(values.scope),
    agentId: values.agent === undefined ? undefined : agentName(values.agent),
    expiresAt: keyEnd(values['expires-in'], values['expires-at']),
  };
}

/** `--agent`: an agent id as records carry it (not blank, at most LIMITS.agentIdChars characters). */
function agentName(raw: string): string {
  if (isBlank(raw)) throw usage('--agent must not be blank');
  if (codePoints(raw) > LIMITS.agentIdChars) throw usage(`--agent must be at most ${LIMITS.agentIdChars} characters`);
  return raw;
}

/** `--scope read,write`: known scopes, at least one, each once. */
function scopeList(raw: string): Scope[] {
  const named = raw.split(',').map((s) => s.trim());
  const unknown = named.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0 || named.length === 0) throw usage(`--scope takes a comma list of ${SCOPES.join(', ')}; not ${unknown.join(', ') || 'nothing'}`);
  return scopesOf(named);
}

/** The key's end: `--expires-in` 30d, 12h or 90m from now, or `--expires-at` a date or date-time in the future; not both. */
function keyEnd(inRaw: string | undefined, atRaw: string | undefined): string | undefined {
  if (inRaw !== undefined && atRaw !== undefined) throw usage('give --expires-in or --expires-at, not both');
  if (inRaw !== undefined) {
    const m = /^(\d{1,5})([dhm])$/.exec(inRaw.trim());
    if (!m || Number(m[1]) === 0) throw usage('--expires-in must be a whole number from 1 to 99999 of days, hours or minutes, e.g. 30d, 12h or 90m');
    const unit = { d: 86_400_000, h: 3_600_000, m: 60_000 }[m[2] as 'd' | 'h' | 'm'];
    return new Date(Date.now() + Number(m[1]) * unit).toISOString();
  }
  if (atRaw === undefined) return undefined;
  const at = parseSince(atRaw);
  if (at === null) throw usage('--expires-at must be a date (YYYY-MM-DD) or an ISO 8601 date-time');
  if (Date.parse(at) <= Date.now()) throw usage('--expires-at must be in the future');
  return at;
}

/** A tenant name as stored: trimmed, not blank, at most NAME_MAX characters. */
function tenantName(raw: string): string {
  const name = raw.trim();
  if (isBlank(name)) throw usage('--name must not be blank');
  if (codePoints(name) > NAME_MAX) throw usage(`--name must be at most ${NAME_MAX} characters`);
  return name;
}

/** A command line that names a command (not a request for help), as parseCommandLine returns it. */
export type CommandLine = Exclude<ReturnType<typeof parseCommandLine>, { help: true }>;
