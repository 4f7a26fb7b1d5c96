/** What each admin command does, once its command line is checked and its stores are open. */
import { hashApiKey, isKeyId } from '../shared/domain/api-key.js';
import type { KeyStore } from '../shared/ports.js';
import { expired, type Limits, type Tenant } from '../shared/domain/tenant.js';
import { backupTo, restoreFrom } from './admin-backup.js';
import { causeOf, CliError } from './admin-cli-error.js';
import type { CommandLine } from './admin-command-line.js';
import { effectiveThrottle, moveKeys, registerIssued } from './admin-gateway-keys.js';
import { jsonLine, type AdminIo, type ImportInput } from './admin-io.js';
import { countRecords, exportRecords, ImportInterrupted, importRecords, OutputFailed } from './admin-records.js';
import { deleteTenant } from './admin-tenant-delete.js';
import type { AdminStores } from './backend.js';
import type { LocalConfig } from './config.js';
import { createTenantWithKey, issueKey } from './tenants.js';

/** What a command is run with. */
export interface CommandContext {
  line: CommandLine;
  config: LocalConfig;
  stores: AdminStores;
  io: AdminIo;
  /** Writes a progress line on stderr. */
  progress: (text: string) => void;
  /** The import's input, opened before the stores; null for every other command. */
  input: ImportInput | null;
}

/** Each command by its name: it returns what the CLI prints (undefined: nothing more). */
export const COMMAND_HANDLERS: Record<string, (context: CommandContext) => Promise<unknown>> = {
  'tenant create': tenantCreate,
  'tenant update': tenantUpdate,
  'tenant delete': tenantDelete,
  'tenant list': tenantList,
  'key create': keyCreate,
  'key revoke': keyRevoke,
  'key list': keyList,
  usage: usageReport,
  export: exportTenant,
  import: importTenant,
};

/** What a command that copies the database file is run with: no stores, which it neither needs nor may open (admin-backup.ts). */
export interface FileCommandContext {
  line: CommandLine;
  config: LocalConfig;
  /** Writes a progress line on stderr. */
  progress: (text: string) => void;
}

/** The commands that copy the database file, by name, on the SQLite backend only: they return what the CLI prints. */
export const FILE_COMMAND_HANDLERS: Record<string, (context: FileCommandContext) => Promise<unknown>> = {
  backup: ({ line, config, progress }) => backupTo(line.to!, line.force, config, progress),
  restore: ({ line, config, progress }) => restoreFrom(line.from!, config, progress),
};

/** Makes a tenant with a first key (registered with API Gateway on a deployed stack) and prints the key. */
async function tenantCreate({ line, config, stores }: CommandContext): Promise<unknown> {
  const { keys } = stores;
  const name = line.name!;
  await requireFreeName(keys, name);
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

/** Changes the limits (and name) given, moves the keys that use them to their usage plan, and prints the tenant. */
async function tenantUpdate({ line, stores }: CommandContext): Promise<unknown> {
  const { keys } = stores;
  const tenant = await requireTenant(keys, line.tenant!);
  if (line.name !== undefined) await requireFreeName(keys, line.name, tenant.tenant_id);
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

/** Without --confirm, says what it would erase and changes nothing; with it, erases the tenant (admin-tenant-delete.ts). */
async function tenantDelete({ line, config, stores, progress }: CommandContext): Promise<unknown> {
  const { keys } = stores;
  const tenant = await requireTenant(keys, line.tenant!);
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

/** Prints every tenant. */
async function tenantList({ stores }: CommandContext): Promise<unknown> {
  const { keys } = stores;
  return (await keys.listTenants()).map(tenantView);
}

/** Issues a key of a tenant (registered with API Gateway on a deployed stack) and prints it. */
async function keyCreate({ line, stores }: CommandContext): Promise<unknown> {
  const { keys } = stores;
  const tenant = await requireTenant(keys, line.tenant!);
  const perKey = { rate: line.rate ?? null, burst: line.burst ?? null };
  const issued = await issueKey(keys, tenant.tenant_id, { ...perKey, scopes: line.scopes, agentId: line.agentId ?? null, expiresAt: line.expiresAt ?? null });
  return await registerIssued(stores, issued, effectiveThrottle(perKey, tenant), 'run the same key create again');
}

/** Revokes a key, given by itself or by its id, and disables it in API Gateway on a deployed stack. */
async function keyRevoke({ line, stores }: CommandContext): Promise<unknown> {
  const { keys } = stores;
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

/**
 * Prints a tenant's keys. A key past its `expires_at` shows as `expired`: it answers 401, like a revoked one
 * (decisions.md), though what is stored of it is only its end.
 */
async function keyList({ line, stores }: CommandContext): Promise<unknown> {
  const { keys } = stores;
  const now = new Date();
  const listed = await keys.listKeys((await requireTenant(keys, line.tenant!)).tenant_id);
  return listed.map((key) => (key.status === 'active' && expired(key, now) ? { ...key, status: 'expired' } : key));
}

/** Prints the usage counters of a month, of every tenant or one. */
async function usageReport({ line, stores }: CommandContext): Promise<unknown> {
  const { keys } = stores;
  const { usage: meter } = stores;
  const rows = await meter.list(line.month, line.tenant);
  // A deleted tenant's counters stay, for billing, and are shown; an id with neither a tenant nor counters is unknown.
  if (line.tenant !== undefined && rows.length === 0) await requireTenant(keys, line.tenant);
  return rows;
}

/** Writes a tenant's records on stdout as NDJSON, and their count on stderr. */
async function exportTenant({ line, stores, io, progress }: CommandContext): Promise<unknown> {
  const { keys } = stores;
  const tenant = await requireTenant(keys, line.tenant!);
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

/** Reads records into a tenant and prints the totals; bad lines are reported and fail the command at its end. */
async function importTenant({ line, stores, io, progress, input }: CommandContext): Promise<unknown> {
  const { keys } = stores;
  const tenant = await requireTenant(keys, line.tenant!);
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

const tenantView = (t: Tenant) => ({
  tenant_id: t.tenant_id,
  name: t.name,
  record_quota: t.limits.recordQuota,
  query_quota: t.limits.queryQuota,
  rate: t.limits.rate,
  burst: t.limits.burst,
  created_at: t.created_at,
});

/** Tenant names are unique regardless of case and Unicode form: "Acme" and "acme" are one name. */
const nameKey = (name: string) => name.normalize('NFKC').trim().toLowerCase();

/** The tenant with this id; not_found if there is none. */
async function requireTenant(keys: KeyStore, id: string): Promise<Tenant> {
  const tenant = await keys.getTenant(id);
  if (!tenant) throw new CliError('not_found', `no tenant ${id}`);
  return tenant;
}

/** Refuses, with name_taken, a name another tenant has (`self` excepted), whatever its case. */
async function requireFreeName(keys: KeyStore, name: string, self?: string): Promise<void> {
  const taken = (await keys.listTenants()).find((t) => t.tenant_id !== self && nameKey(t.name) === nameKey(name));
  if (taken) {
    throw new CliError('name_taken', `a tenant named "${taken.name}" exists already (${taken.tenant_id}); tenant names are unique, whatever their case`, 1, {
      tenant_id: taken.tenant_id,
    });
  }
}
