import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { KeyThrottle } from '../shared/adapters/aws/gateway/usage-plans.js';
import { hashApiKey, isKeyId } from '../shared/domain/api-key.js';
import { isQuotaMonth, quotaMonth } from '../shared/domain/quota-month.js';
import type { Tenant } from '../shared/domain/tenant.js';
import { codePoints, isBlank } from '../shared/domain/text.js';
import { NoDatabaseError, openAdminStores, type AdminStores } from './backends.js';
import { loadConfig, type LocalConfig } from './config.js';
import { createTenantWithKey, issueKey, type IssuedKey } from './tenants.js';

const HELP = `Usage: npm run --silent admin -- [--backend sqlite|dynamodb] [--create] <command>

  tenant create --name <name> [--record-quota N] [--query-quota N] [--rate R] [--burst B]
  tenant list
  key create --tenant <tenant_id> [--rate R] [--burst B]
  key revoke <api_key or key_id>
  key list --tenant <tenant_id>
  usage [--tenant <tenant_id>] [--month YYYY-MM]

Every command prints JSON on stdout. Errors print {"error", "message"} on stderr and exit with 1
(2 for a malformed command). It reads the same settings as the server: MEMORY_BACKEND (default sqlite),
MEMORY_DATA_DIR (default ./.memory) for SQLite; DYNAMODB_ENDPOINT, AWS_REGION and the MEMORY_*_TABLE
names for DynamoDB. --backend overrides MEMORY_BACKEND.

It works on data that exists: where there is none (no memory.db in MEMORY_DATA_DIR, no tables at
DYNAMODB_ENDPOINT) it exits 1 with error no_database and creates nothing. --create makes a new database
there (or the tables, on DynamoDB Local). Tenant names are unique, whatever their case: tenant create
with a name in use exits 1 with error name_taken and the tenant_id that has it.

Against a deployed stack (the dynamodb backend with MEMORY_API_ID, MEMORY_API_STAGE and
MEMORY_DEFAULT_USAGE_PLAN_ID from the stack's outputs), tenant create and key create also register the new
key with API Gateway, in the usage plan for its rate and burst, and key revoke disables it there. If API
Gateway fails, the new key is revoked again, so no key is left that API Gateway refuses, and the error
(code gateway_error, with tenant_id and key_id) says what exists: run key create again (after tenant
create: key create --tenant <tenant_id>). If only disabling fails, the key is revoked all the same; run
key revoke again to retry.`;

/** A failure the CLI reports as JSON: exit code 2 for a malformed command, 1 otherwise; `details` join the JSON. */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode = 1,
    readonly details: Record<string, string> = {},
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
  backend: { type: 'string' },
  create: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;
type OptionName = keyof typeof OPTIONS;

/** Options every command takes. */
const GLOBAL_OPTIONS: readonly OptionName[] = ['backend', 'create', 'help'];

/** The commands: the options each takes, those it needs (with their placeholder), and the one argument `key revoke` needs. */
const COMMANDS: Record<string, { options: readonly OptionName[]; required?: Partial<Record<OptionName, string>>; argument?: string }> = {
  'tenant create': { options: ['name', 'record-quota', 'query-quota', 'rate', 'burst'], required: { name: '<name>' } },
  'tenant list': { options: [] },
  'key create': { options: ['tenant', 'rate', 'burst'], required: { tenant: '<tenant_id>' } },
  'key revoke': { options: [], argument: '<api_key or key_id>' },
  'key list': { options: ['tenant'], required: { tenant: '<tenant_id>' } },
  usage: { options: ['tenant', 'month'] },
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
  const command = positionals[0] === 'usage' ? 'usage' : positionals.slice(0, 2).join(' ');
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
  const month = values.month ?? quotaMonth(new Date());
  if (!isQuotaMonth(month)) throw usage('--month must be YYYY-MM');
  return {
    help: false as const,
    command,
    argument: rest[0],
    backend: values.backend,
    create: values.create === true,
    tenant: values.tenant,
    month,
    name: values.name === undefined ? undefined : tenantName(values.name),
    recordQuota: count('record-quota', values['record-quota'], true),
    queryQuota: count('query-quota', values['query-quota'], true),
    rate: rate(values.rate),
    burst: count('burst', values.burst, false),
  };
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

/** Runs one admin command on the stores `open` gives and returns what it prints. */
export async function adminCommand(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  open: (config: LocalConfig, options: { create: boolean }) => Promise<AdminStores> = openAdminStores,
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
  let stores: AdminStores;
  try {
    stores = await open(config, { create: line.create });
  } catch (error) {
    if (error instanceof NoDatabaseError) throw new CliError('no_database', error.message, 1, error.details);
    throw error;
  }
  const { keys, usage: meter } = stores;
  const requireTenant = async (id: string) => {
    const tenant = await keys.getTenant(id);
    if (!tenant) throw new CliError('not_found', `no tenant ${id}`);
    return tenant;
  };
  try {
    switch (command) {
      case 'tenant create': {
        const name = line.name!;
        const taken = (await keys.listTenants()).find((t) => nameKey(t.name) === nameKey(name));
        if (taken) {
          throw new CliError('name_taken', `a tenant named "${taken.name}" exists already (${taken.tenant_id}); tenant names are unique, whatever their case`, 1, {
            tenant_id: taken.tenant_id,
          });
        }
        const d = config.defaultLimits;
        const limits = {
          recordQuota: line.recordQuota ?? d.recordQuota,
          queryQuota: line.queryQuota ?? d.queryQuota,
          rate: line.rate ?? d.rate,
          burst: line.burst ?? d.burst,
        };
        const issued = await createTenantWithKey(keys, name, limits);
        const retry = `run key create --tenant ${issued.tenant_id} (the tenant exists)`;
        return registerIssued(stores, issued, { rate: limits.rate, burst: limits.burst }, retry);
      }
      case 'tenant list':
        return (await keys.listTenants()).map(tenantView);
      case 'key create': {
        const tenant = await requireTenant(line.tenant!);
        const perKey = { rate: line.rate ?? null, burst: line.burst ?? null };
        const issued = await issueKey(keys, tenant.tenant_id, perKey);
        // Field by field, as the authorizer reads them: a key with only --rate keeps its tenant's burst.
        const limits = { rate: perKey.rate ?? tenant.limits.rate, burst: perKey.burst ?? tenant.limits.burst };
        return registerIssued(stores, issued, limits, 'run the same key create again');
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
        return keys.listKeys((await requireTenant(line.tenant!)).tenant_id);
      case 'usage': {
        if (line.tenant !== undefined) await requireTenant(line.tenant);
        return meter.list(line.month, line.tenant);
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
    stores.close();
  }
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
  // The CLI's stderr carries only JSON errors; the AWS SDK's notice that it will need Node 22 from 2027
  // would break that (the README says so once instead).
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  adminCommand(process.argv.slice(2)).then(
    (result) => {
      process.stdout.write(typeof result === 'string' ? `${result}\n` : `${JSON.stringify(result, null, 2)}\n`);
    },
    (error: unknown) => {
      const cli = error instanceof CliError ? error : null;
      const message = error instanceof Error ? error.message : String(error);
      process.stderr.write(`${JSON.stringify({ error: cli?.code ?? 'error', message, ...cli?.details })}\n`);
      process.exitCode = cli?.exitCode ?? 1;
    },
  );
}
