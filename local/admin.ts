import { realpathSync } from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { AUTHORIZER_CACHE_TTL_SECONDS } from '../infra/settings.js';
import type { KeyThrottle } from '../shared/adapters/aws/gateway/usage-plans.js';
import { hashApiKey, isKeyId } from '../shared/domain/api-key.js';
import { isQuotaMonth, quotaMonth } from '../shared/domain/quota-month.js';
import { SCOPES, scopesOf, type ApiKeyInfo, type Limits, type Scope, type Tenant } from '../shared/domain/tenant.js';
import { parseSince } from '../shared/domain/since.js';
import { LIMITS } from '../shared/domain/record.js';
import { codePoints, isBlank } from '../shared/domain/text.js';
import type { ErasedCounts } from '../shared/ports.js';
import { countRecords, exportRecords, ImportInterrupted, importRecords, OutputFailed } from './admin-records.js';
import { NoDatabaseError, openAdminStores, type AdminStores } from './backends.js';
import { loadConfig, type LocalConfig } from './config.js';
import { createTenantWithKey, issueKey, type IssuedKey } from './tenants.js';

const HELP = `Usage: npm run --silent admin -- [--backend sqlite|dynamodb] [--create] <command>

  tenant create --name <name> [--record-quota N] [--query-quota N] [--rate R] [--burst B]
  tenant update --tenant <tenant_id> [--name <name>] [--record-quota N] [--query-quota N] [--rate R] [--burst B]
  tenant delete --tenant <tenant_id> [--confirm]
  tenant list
  key create --tenant <tenant_id> [--rate R] [--burst B] [--scope read,write,delete] [--agent <agent_id>] [--expires-in 30d | --expires-at <date-time>]
  key revoke <api_key or key_id>
  key list --tenant <tenant_id>
  usage [--tenant <tenant_id>] [--month YYYY-MM]
  export --tenant <tenant_id>                   > records.ndjson
  import --tenant <tenant_id> [--file <path>]   (without --file, from stdin)

Every command prints JSON on stdout (export: NDJSON). Errors print {"error", "message"} on stderr and exit
with 1 (2 for a malformed command); every line on stderr is JSON. It reads the same settings as the server: MEMORY_BACKEND (default sqlite),
MEMORY_DATA_DIR (default ./.memory) for SQLite; DYNAMODB_ENDPOINT, AWS_REGION and the MEMORY_*_TABLE
names for DynamoDB. --backend overrides MEMORY_BACKEND.

It works on data that exists: where there is none (no memory.db in MEMORY_DATA_DIR, no tables at
DYNAMODB_ENDPOINT) it exits 1 with error no_database and creates nothing. --create makes a new database
there (or the tables, on DynamoDB Local). Tenant names are unique, whatever their case: tenant create
with a name in use exits 1 with error name_taken and the tenant_id that has it.

tenant update changes only the limits (and name) it is given, and prints the tenant as it is then.
tenant delete without --confirm changes nothing: it exits 1 with error confirmation_required and the
counts it would erase. With --confirm it revokes the tenant's keys, waits until no cached authorization
of them can be used (MEMORY_AUTH_CACHE_SECONDS locally, 30 s on AWS), erases its records with their search
index entries, its classification jobs and idempotency keys, then deletes the tenant and its keys, and
prints what it removed. Its usage counters stay, for billing. Cut short, it can be run again.

export writes every record of the tenant on stdout as NDJSON, oldest first, one record a line in the
API's shape (with classification). import reads that form, from --file or stdin, into a tenant that
exists: it keeps each record's id, created_at and classification, skips ids the tenant has already (so it
can be run again), counts against no quota, and prints {imported, skipped, taken, invalid} (taken: ids
another tenant holds, which SQLite keeps unique). A line that is not a valid record is reported on
stderr with its line number and not imported; the other lines are, and the command then exits 1 with
error invalid_lines. Progress of long runs goes to stderr as {"progress": …} lines.

Against a deployed stack (the dynamodb backend with MEMORY_API_ID, MEMORY_API_STAGE and
MEMORY_DEFAULT_USAGE_PLAN_ID from the stack's outputs), tenant create and key create also register the new
key with API Gateway, in the usage plan for its rate and burst, and key revoke disables it there. If API
Gateway fails, the new key is revoked again, so no key is left that API Gateway refuses, and the error
(code gateway_error, with tenant_id and key_id) says what exists: run key create again (after tenant
create: key create --tenant <tenant_id>). If only disabling fails, the key is revoked all the same; run
key revoke again to retry. tenant update with --rate or --burst moves the tenant's active keys that use
its limits to the usage plan for the new ones (API Gateway refuses each key for a moment while it
moves); if that fails, the tenant is updated and gateway_error says which key: run the same tenant update
again. tenant delete disables the tenant's keys there before it erases anything; if that fails, nothing
is erased: run it again.`;

/**
 * A failure the CLI reports as JSON: exit code 2 for a malformed command, 1 otherwise; `details` join the
 * JSON. `output`, when set, is what the command did all the same (an import with bad lines), for stdout.
 */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode = 1,
    readonly details: Record<string, unknown> = {},
    readonly output?: unknown,
  ) {
    super(message);
  }
}

const usage = (message: string) => new CliError('usage', message, 2);

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

const tenantView = (t: Tenant) => ({
  tenant_id: t.tenant_id,
  name: t.name,
  record_quota: t.limits.recordQuota,
  query_quota: t.limits.queryQuota,
  rate: t.limits.rate,
  burst: t.limits.burst,
  created_at: t.created_at,
});

const causeOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Registers a key that was just stored with API Gateway. If that fails, the key is revoked again: a key
 * that API Gateway refuses would only mislead whoever holds it, and a new one costs nothing.
 */
async function registerIssued(stores: AdminStores, issued: IssuedKey, limits: KeyThrottle, retry: string): Promise<IssuedKey> {
  if (!stores.gateway) return issued;
  try {
    await stores.gateway.register(issued.key_id, limits);
    return issued;
  } catch (error) {
    const details = { tenant_id: issued.tenant_id, key_id: issued.key_id };
    const failed = `API Gateway did not register key ${issued.key_id} (${causeOf(error)})`;
    try {
      await stores.keys.revoke({ keyId: issued.key_id });
    } catch (revokeError) {
      throw new CliError(
        'gateway_error',
        `${failed}, and revoking it failed too (${causeOf(revokeError)}): the key is stored but API Gateway refuses it. ` +
          `Run key revoke ${issued.key_id}; then, to retry, ${retry}.`,
        1,
        details,
      );
    }
    throw new CliError('gateway_error', `${failed}; the key was revoked, so no usable key was issued. To retry, ${retry}.`, 1, details);
  }
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
};

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

/** The command line as a command, its argument and its options; every malformed command line is a usage error. */
function parseCommandLine(argv: string[]) {
  let parsed;
  try {
    parsed = parseArgs({ args: joinNegativeValues(argv), allowPositionals: true, strict: true, options: OPTIONS });
  } catch (error) {
    throw usage(`${(error as Error).message} (see --help)`);
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0) return { help: true as const };
  const command = COMMANDS[positionals[0]!] ? positionals[0]! : positionals.slice(0, 2).join(' ');
  const spec = COMMANDS[command];
  if (spec === undefined) throw usage(`unknown command: ${positionals.join(' ')}\n\n${HELP}`);
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
  if (values.file === '') throw usage('--file must name a file');
  const month = values.month ?? quotaMonth(new Date());
  if (!isQuotaMonth(month)) throw usage('--month must be YYYY-MM');
  return {
    help: false as const,
    command,
    argument: rest[0],
    backend: values.backend,
    create: values.create === true,
    tenant: values.tenant,
    file: values.file,
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
    if (!m || Number(m[1]) === 0) throw usage('--expires-in must be a whole number of days, hours or minutes, e.g. 30d, 12h or 90m');
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

/** Tenant names are unique regardless of case and Unicode form: "Acme" and "acme" are one name. */
const nameKey = (name: string) => name.normalize('NFKC').trim().toLowerCase();

/** Where a command reads and writes besides its result: stdin for import, stdout for export, stderr for progress. */
export interface AdminIo {
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable;
  stderr: Writable;
}

const processIo = (): AdminIo => ({ stdin: process.stdin, stdout: process.stdout, stderr: process.stderr });

/** One JSON line on stderr: a progress line, a bad line of an import, an export's count. */
const jsonLine = (out: Writable, value: unknown) => out.write(`${JSON.stringify(value)}\n`);

/** Runs one admin command on the stores `open` gives and returns what it prints (undefined: nothing more). */
export async function adminCommand(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  open: (config: LocalConfig, options: { create: boolean }) => Promise<AdminStores> = openAdminStores,
  io: AdminIo = processIo(),
): Promise<unknown> {
  const line = parseCommandLine(argv);
  if (line.help) return HELP;
  const { command } = line;

  let config: LocalConfig;
  try {
    config = loadConfig(line.backend === undefined ? env : { ...env, MEMORY_BACKEND: line.backend });
  } catch (error) {
    throw new CliError('invalid_configuration', (error as Error).message);
  }
  if (line.create && config.aws && !config.aws.dynamodbEndpoint) {
    throw usage('--create makes tables on DynamoDB Local only (DYNAMODB_ENDPOINT); on AWS the stack makes them (cdk deploy)');
  }
  // An import's input is found before anything is opened: a mistyped path or a forgotten pipe changes nothing.
  let input: { stream: Readable; close(): Promise<void> } | null = null;
  if (command === 'import') input = await importInput(line.file, io.stdin);
  let stores: AdminStores;
  try {
    stores = await open(config, { create: line.create });
  } catch (error) {
    await input?.close();
    if (error instanceof NoDatabaseError) throw new CliError('no_database', error.message, 1, error.details);
    throw error;
  }
  const { keys, usage: meter } = stores;
  const progress = (text: string) => jsonLine(io.stderr, { progress: text });
  const requireTenant = async (id: string) => {
    const tenant = await keys.getTenant(id);
    if (!tenant) throw new CliError('not_found', `no tenant ${id}`);
    return tenant;
  };
  const requireFreeName = async (name: string, self?: string) => {
    const taken = (await keys.listTenants()).find((t) => t.tenant_id !== self && nameKey(t.name) === nameKey(name));
    if (taken) {
      throw new CliError('name_taken', `a tenant named "${taken.name}" exists already (${taken.tenant_id}); tenant names are unique, whatever their case`, 1, {
        tenant_id: taken.tenant_id,
      });
    }
  };
  // Every case awaits what it returns: the stores close in `finally`, which would not wait for a promise returned as it is.
  try {
    switch (command) {
      case 'tenant create': {
        const name = line.name!;
        await requireFreeName(name);
        const d = config.defaultLimits;
        const limits = {
          recordQuota: line.recordQuota ?? d.recordQuota,
          queryQuota: line.queryQuota ?? d.queryQuota,
          rate: line.rate ?? d.rate,
          burst: line.burst ?? d.burst,
        };
        const issued = await createTenantWithKey(keys, name, limits);
        const retry = `run key create --tenant ${issued.tenant_id} (the tenant exists)`;
        return await registerIssued(stores, issued, { rate: limits.rate, burst: limits.burst }, retry);
      }
      case 'tenant update': {
        const tenant = await requireTenant(line.tenant!);
        if (line.name !== undefined) await requireFreeName(line.name, tenant.tenant_id);
        const limits: Partial<Limits> = {};
        if (line.recordQuota !== undefined) limits.recordQuota = line.recordQuota;
        if (line.queryQuota !== undefined) limits.queryQuota = line.queryQuota;
        if (line.rate !== undefined) limits.rate = line.rate;
        if (line.burst !== undefined) limits.burst = line.burst;
        const updated = await keys.updateTenant(tenant.tenant_id, { ...(line.name !== undefined ? { name: line.name } : {}), limits });
        if (!updated) throw new CliError('not_found', `no tenant ${tenant.tenant_id}`);
        // Run again after a failure, the store has the new limits already: every key is checked, not only changed ones.
        if (line.rate !== undefined || line.burst !== undefined) await moveKeys(stores, updated);
        return tenantView(updated);
      }
      case 'tenant delete': {
        const tenant = await requireTenant(line.tenant!);
        if (!line.confirm) {
          const [records, tenantKeys] = await Promise.all([countRecords(stores.records, tenant.tenant_id, { progress }), keys.listKeys(tenant.tenant_id)]);
          throw new CliError(
            'confirmation_required',
            `tenant delete erases tenant ${tenant.tenant_id} ("${tenant.name}") for good: ${records} records with their search index ` +
              `entries, its classification jobs and idempotency keys, and ${tenantKeys.length} API keys; its usage counters stay. ` +
              'Nothing was changed. To do it, run the same command with --confirm.',
            1,
            { tenant_id: tenant.tenant_id, name: tenant.name, records, api_keys: tenantKeys.length },
          );
        }
        return await deleteTenant(stores, config, tenant, progress);
      }
      case 'tenant list':
        return (await keys.listTenants()).map(tenantView);
      case 'key create': {
        const tenant = await requireTenant(line.tenant!);
        const perKey = { rate: line.rate ?? null, burst: line.burst ?? null };
        const issued = await issueKey(keys, tenant.tenant_id, { ...perKey, scopes: line.scopes, agentId: line.agentId ?? null, expiresAt: line.expiresAt ?? null });
        return await registerIssued(stores, issued, effectiveThrottle(perKey, tenant), 'run the same key create again');
      }
      case 'key revoke': {
        const ref = line.argument!;
        const revoked = await keys.revoke(isKeyId(ref) ? { keyId: ref } : { keyHash: hashApiKey(ref) });
        if (!revoked) throw new CliError('not_found', 'no such key');
        try {
          await stores.gateway?.disable(revoked.key_id);
        } catch (error) {
          throw new CliError(
            'gateway_error',
            `key ${revoked.key_id} is revoked, and the authorizer refuses it, but API Gateway did not disable its API key ` +
              `(${causeOf(error)}). Run key revoke ${revoked.key_id} again to retry.`,
            1,
            { tenant_id: revoked.tenant_id, key_id: revoked.key_id },
          );
        }
        return revoked;
      }
      case 'key list':
        return await keys.listKeys((await requireTenant(line.tenant!)).tenant_id);
      case 'usage': {
        const rows = await meter.list(line.month, line.tenant);
        // A deleted tenant's counters stay, for billing, and are shown; an id with neither a tenant nor counters is unknown.
        if (line.tenant !== undefined && rows.length === 0) await requireTenant(line.tenant);
        return rows;
      }
      case 'export': {
        const tenant = await requireTenant(line.tenant!);
        let exported: number;
        try {
          exported = await exportRecords(stores.records, tenant.tenant_id, io.stdout, { progress });
        } catch (error) {
          if (!(error instanceof OutputFailed)) throw error;
          throw new CliError('output_closed', `the export stopped before its end: ${error.message}`);
        }
        jsonLine(io.stderr, { exported, tenant_id: tenant.tenant_id });
        return undefined;
      }
      case 'import': {
        const tenant = await requireTenant(line.tenant!);
        const source = line.file ?? 'stdin';
        let totals;
        try {
          totals = await importRecords(stores.records, tenant.tenant_id, input!.stream, {
            progress,
            invalidLine: (n, problem) => jsonLine(io.stderr, { error: 'invalid_line', line: n, message: problem }),
          });
        } catch (error) {
          if (!(error instanceof ImportInterrupted)) throw error;
          const { imported, skipped } = error.totals;
          throw new CliError(
            'import_failed',
            `the import stopped after line ${error.line} of ${source} (${error.message}); before that it imported ${imported} ` +
              `records and skipped ${skipped}. Running the same import again skips what is there and goes on.`,
            1,
            { line: error.line },
            error.totals,
          );
        }
        if (totals.invalid > 0) {
          throw new CliError(
            'invalid_lines',
            `${totals.invalid} lines of ${source} are not valid records and were not imported (each is reported above, with its ` +
              'line number); every other line was. Fix those lines and import the file again: what is there already is skipped.',
            1,
            { invalid: totals.invalid },
            totals,
          );
        }
        return totals;
      }
      default:
        throw new Error(`no handler for ${command}`);
    }
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

/** A key's token bucket, field by field as the authorizer reads it: its own rate and burst where it has them, else its tenant's. */
const effectiveThrottle = (key: Pick<ApiKeyInfo, 'rate' | 'burst'>, tenant: Tenant): KeyThrottle => ({
  rate: key.rate ?? tenant.limits.rate,
  burst: key.burst ?? tenant.limits.burst,
});

/** Where an import reads: the file named (opened now, so a wrong path fails first), or stdin when it is not a terminal. */
async function importInput(file: string | undefined, stdin: AdminIo['stdin']): Promise<{ stream: Readable; close(): Promise<void> }> {
  if (file === undefined) {
    if (stdin.isTTY) throw usage('import reads NDJSON from --file <path> or from stdin, and stdin is a terminal: pass --file, or pipe an export in');
    return { stream: stdin, close: async () => undefined };
  }
  try {
    const handle = await openFile(file, 'r');
    return { stream: handle.createReadStream({ autoClose: false }), close: () => handle.close() };
  } catch (error) {
    throw new CliError('no_file', `cannot read ${file}: ${causeOf(error)}`, 1, { path: file });
  }
}

/**
 * After a change of the tenant's rate or burst, puts each of its active keys that uses the tenant's rate or
 * burst (not both of its own) in the usage plan for its new effective limits. A key already there is left
 * alone, so running the same update again after a failure finishes the work.
 */
async function moveKeys(stores: AdminStores, tenant: Tenant): Promise<void> {
  if (!stores.gateway) return;
  const affected = (await stores.keys.listKeys(tenant.tenant_id)).filter((k) => k.status === 'active' && (k.rate === null || k.burst === null));
  let done = 0;
  for (const key of affected) {
    const limits = effectiveThrottle(key, tenant);
    try {
      await stores.gateway.move(key.key_id, limits);
      done++;
    } catch (error) {
      throw new CliError(
        'gateway_error',
        `tenant ${tenant.tenant_id} is updated, but API Gateway did not move key ${key.key_id} to the usage plan for rate ` +
          `${limits.rate}, burst ${limits.burst} (${causeOf(error)}); ${done} of the ${affected.length} keys that use the tenant's limits ` +
          `are in their new plan. Until the others are, API Gateway throttles them at their old limits, or refuses key ${key.key_id} if it ` +
          'was taken out of its old plan. Run the same tenant update again to retry.',
        1,
        { tenant_id: tenant.tenant_id, key_id: key.key_id },
      );
    }
  }
}

/** How long an authorization can be reused after its key is revoked: the authorizer's cache on AWS, the local gateway's elsewhere. */
function authorizationCacheMs(config: LocalConfig): number {
  return config.aws && !config.aws.dynamodbEndpoint ? AUTHORIZER_CACHE_TTL_SECONDS * 1000 : config.authCacheMs;
}

/** Adds erase counts kind by kind. */
function addCounts(a: ErasedCounts, b: ErasedCounts): ErasedCounts {
  const sum = { ...a };
  for (const [kind, n] of Object.entries(b)) sum[kind] = (sum[kind] ?? 0) + n;
  return sum;
}

/**
 * Erases a tenant, in an order that can be run again from any point it was cut short at:
 * 1. revoke its keys, so that nothing new is written while its records go, and disable them in API
 *    Gateway (a failure there stops before anything is erased);
 * 2. wait until no cached authorization of a key revoked just now can be used any more;
 * 3. erase its records (with their search index entries), jobs and idempotency keys;
 * 4. delete the tenant and its keys;
 * 5. erase again whatever a request authorized before step 1 wrote after step 3.
 * The usage counters stay, for billing.
 */
async function deleteTenant(stores: AdminStores, config: LocalConfig, tenant: Tenant, progress: (text: string) => void) {
  const { keys, records } = stores;
  const id = tenant.tenant_id;
  const tenantKeys = await keys.listKeys(id);
  let revokedUntil = 0;
  for (const key of tenantKeys) {
    const revoked = key.status === 'active' ? await keys.revoke({ keyId: key.key_id }) : key;
    if (revoked?.revoked_at) revokedUntil = Math.max(revokedUntil, Date.parse(revoked.revoked_at));
  }
  if (stores.gateway) {
    for (const key of tenantKeys) {
      try {
        await stores.gateway.disable(key.key_id);
      } catch (error) {
        throw new CliError(
          'gateway_error',
          `API Gateway did not disable key ${key.key_id} (${causeOf(error)}). Nothing was erased; the tenant's keys are revoked, so ` +
            `the authorizer refuses them. Run tenant delete --tenant ${id} --confirm again to retry.`,
          1,
          { tenant_id: id, key_id: key.key_id },
        );
      }
    }
  }
  const wait = revokedUntil + authorizationCacheMs(config) - Date.now();
  if (wait > 0) {
    progress(`the tenant's keys are revoked; waiting ${Math.ceil(wait / 1000)} s until no cached authorization of them can be used`);
    await sleep(wait);
  }
  // The store reports large erases page by page; a line a second at most is enough to show it is moving.
  let reported = Date.now();
  const eraseProgress = (text: string) => {
    if (Date.now() - reported < 1000) return;
    reported = Date.now();
    progress(`erasing: ${text}`);
  };
  let erased = await records.eraseTenant(id, eraseProgress);
  const deleted = await keys.deleteTenant(id);
  if ((await records.list(id, { filters: {}, order: 'asc', limit: 1 })).length > 0) {
    erased = addCounts(erased, await records.eraseTenant(id, eraseProgress));
  }
  return {
    tenant_id: id,
    name: tenant.name,
    removed: { ...erased, api_keys: deleted?.keys ?? 0 },
    ...(stores.gateway ? { api_gateway_keys_disabled: tenantKeys.length } : {}),
    search_index: config.aws
      ? "each record's entry leaves the search index when its delete reaches the indexer through the table's stream (within seconds)"
      : "the tenant's search index (its postings and statistics, search_index_rows) was removed after its records",
    kept: `the usage counters: usage --tenant ${id} still shows the months it used, for billing`,
  };
}

/** True when this file is the program (`tsx local/admin.ts`), not a module a test imported. */
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
