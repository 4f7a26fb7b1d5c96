import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { KeyThrottle } from '../shared/adapters/aws/gateway/usage-plans.js';
import { hashApiKey, isKeyId } from '../shared/domain/api-key.js';
import { isQuotaMonth, quotaMonth } from '../shared/domain/quota-month.js';
import type { Tenant } from '../shared/domain/tenant.js';
import { openAdminStores, type AdminStores } from './backends.js';
import { loadConfig, type LocalConfig } from './config.js';
import { createTenantWithKey, issueKey, type IssuedKey } from './tenants.js';

const HELP = `Usage: npm run --silent admin -- [--backend sqlite|dynamodb] <command>

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

/** Runs one admin command on the stores `open` gives and returns what it prints. */
export async function adminCommand(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  open: (config: LocalConfig) => Promise<AdminStores> = openAdminStores,
): Promise<unknown> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      name: { type: 'string' },
      tenant: { type: 'string' },
      month: { type: 'string' },
      'record-quota': { type: 'string' },
      'query-quota': { type: 'string' },
      rate: { type: 'string' },
      burst: { type: 'string' },
      backend: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const command = positionals.slice(0, 2).join(' ');
  if (values.help || positionals.length === 0) return HELP;

  if (values.backend !== undefined && values.backend !== 'sqlite' && values.backend !== 'dynamodb') {
    throw usage('--backend must be sqlite or dynamodb');
  }
  const config = loadConfig(values.backend === undefined ? env : { ...env, MEMORY_BACKEND: values.backend });
  const stores = await open(config);
  const { keys, usage: meter } = stores;
  const requireTenant = async (id: string | undefined) => {
    if (id === undefined) throw usage('--tenant <tenant_id> is required');
    const tenant = await keys.getTenant(id);
    if (!tenant) throw new CliError('not_found', `no tenant ${id}`);
    return tenant;
  };
  try {
    switch (command) {
      case 'tenant create': {
        if (values.name === undefined || values.name.trim() === '') throw usage('--name <name> is required');
        const d = config.defaultLimits;
        const limits = {
          recordQuota: count('record-quota', values['record-quota'], true) ?? d.recordQuota,
          queryQuota: count('query-quota', values['query-quota'], true) ?? d.queryQuota,
          rate: rate(values.rate) ?? d.rate,
          burst: count('burst', values.burst, false) ?? d.burst,
        };
        const issued = await createTenantWithKey(keys, values.name, limits);
        const retry = `run key create --tenant ${issued.tenant_id} (the tenant exists)`;
        return registerIssued(stores, issued, { rate: limits.rate, burst: limits.burst }, retry);
      }
      case 'tenant list':
        return (await keys.listTenants()).map(tenantView);
      case 'key create': {
        const tenant = await requireTenant(values.tenant);
        const perKey = { rate: rate(values.rate) ?? null, burst: count('burst', values.burst, false) ?? null };
        const issued = await issueKey(keys, tenant.tenant_id, perKey);
        // Field by field, as the authorizer reads them: a key with only --rate keeps its tenant's burst.
        const limits = { rate: perKey.rate ?? tenant.limits.rate, burst: perKey.burst ?? tenant.limits.burst };
        return registerIssued(stores, issued, limits, 'run the same key create again');
      }
      case 'key revoke': {
        const ref = positionals[2];
        if (ref === undefined) throw usage('key revoke needs an API key or a key id');
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
        return (await keys.listKeys((await requireTenant(values.tenant)).tenant_id));
      case 'usage': {
        const month = values.month ?? quotaMonth(new Date());
        if (!isQuotaMonth(month)) throw usage('--month must be YYYY-MM');
        if (values.tenant !== undefined) await requireTenant(values.tenant);
        return meter.list(month, values.tenant);
      }
      default:
        throw usage(`unknown command: ${positionals.join(' ')}\n\n${HELP}`);
    }
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
      const code = cli?.code ?? ((error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? 'usage' : 'error');
      process.stderr.write(`${JSON.stringify({ error: code, message: (error as Error).message, ...cli?.details })}\n`);
      process.exitCode = cli?.exitCode ?? (code === 'usage' ? 2 : 1);
    },
  );
}
