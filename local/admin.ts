import { parseArgs } from 'node:util';
import { hashApiKey, isKeyId } from '../shared/domain/api-key.js';
import { isQuotaMonth, quotaMonth } from '../shared/domain/quota-month.js';
import type { Tenant } from '../shared/domain/tenant.js';
import { openAdminStores } from './backends.js';
import { loadConfig } from './config.js';
import { createTenantWithKey, issueKey } from './tenants.js';

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
names for DynamoDB. --backend overrides MEMORY_BACKEND.`;

/** A mistake in the command line or its values; printed as JSON, exit code 2 for usage, 1 otherwise. */
class CliError extends Error {
  constructor(readonly code: string, message: string, readonly exitCode = 1) {
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

/** Runs one admin command and returns what it prints. */
async function run(argv: string[]): Promise<unknown> {
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
  // The CLI's stderr carries only JSON errors; the AWS SDK's notice that it will need Node 22 from 2027
  // would break that (the README says so once instead).
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const config = loadConfig(values.backend === undefined ? process.env : { ...process.env, MEMORY_BACKEND: values.backend });
  const stores = await openAdminStores(config);
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
        const issued = await createTenantWithKey(keys, values.name, {
          recordQuota: count('record-quota', values['record-quota'], true) ?? d.recordQuota,
          queryQuota: count('query-quota', values['query-quota'], true) ?? d.queryQuota,
          rate: rate(values.rate) ?? d.rate,
          burst: count('burst', values.burst, false) ?? d.burst,
        });
        return issued;
      }
      case 'tenant list':
        return (await keys.listTenants()).map(tenantView);
      case 'key create': {
        const tenant = await requireTenant(values.tenant);
        return issueKey(keys, tenant.tenant_id, { rate: rate(values.rate) ?? null, burst: count('burst', values.burst, false) ?? null });
      }
      case 'key revoke': {
        const ref = positionals[2];
        if (ref === undefined) throw usage('key revoke needs an API key or a key id');
        const revoked = await keys.revoke(isKeyId(ref) ? { keyId: ref } : { keyHash: hashApiKey(ref) });
        if (!revoked) throw new CliError('not_found', 'no such key');
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

run(process.argv.slice(2)).then(
  (result) => {
    process.stdout.write(typeof result === 'string' ? `${result}\n` : `${JSON.stringify(result, null, 2)}\n`);
  },
  (error: unknown) => {
    const cli = error instanceof CliError ? error : null;
    const code = cli?.code ?? ((error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? 'usage' : 'error');
    process.stderr.write(`${JSON.stringify({ error: code, message: (error as Error).message })}\n`);
    process.exitCode = cli?.exitCode ?? (code === 'usage' ? 2 : 1);
  },
);
