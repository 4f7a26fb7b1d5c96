/** The admin CLI's help: its commands, what each prints, and how it behaves on each backend. */
export const ADMIN_HELP = `Usage: npm run --silent admin -- [--backend sqlite|dynamodb] [--create] <command>

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
  backup --to <file> [--force]
  restore --from <file>                         (into a MEMORY_DATA_DIR without a database)

Every command prints JSON on stdout (export: NDJSON). Errors print {"error", "message"} on stderr and exit
with 1 (2 for a malformed command); every line on stderr is JSON. It reads the same settings as the server: MEMORY_BACKEND (default sqlite),
MEMORY_DATA_DIR (default ./.memory) for SQLite; DYNAMODB_ENDPOINT, AWS_REGION and the MEMORY_*_TABLE
names for DynamoDB. --backend overrides MEMORY_BACKEND.

It works on data that exists (restore excepted): where there is none (no memory.db in MEMORY_DATA_DIR,
no tables at DYNAMODB_ENDPOINT) it exits 1 with error no_database and creates nothing. --create makes a new database
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
can be run again; ids are each tenant's own, so another tenant may hold the same ones), counts against
no quota, and prints {imported, skipped, invalid}. A line that is not a valid record is reported on
stderr with its line number and not imported; the other lines are, and the command then exits 1 with
error invalid_lines. Progress of long runs goes to stderr as {"progress": …} lines.

backup copies the SQLite database (records, search index, tenants, keys, counters) into <file> as it was
at one instant, while the server runs and writes, and prints {file, bytes, records, tenants,
schema_version, taken_at}. It writes <file>.<pid>.partial first and gives it the name only once it is
complete, so <file> is never half-written. A file that exists is kept (error file_exists) unless --force,
which replaces it that way. restore --from <file> checks the file (a database of this service, a schema
version this version knows, SQLite's integrity check) on a copy, and only then makes that copy the
memory.db of MEMORY_DATA_DIR (made if need be); where that directory holds a database already, it exits 1
with error database_exists and changes nothing: stop the server, restore into a new, empty directory, and
start the server there (it migrates a backup of an older version as an upgrade). Both work on SQLite only;
on the dynamodb backend they exit 1 with error unsupported_backend (DynamoDB backs its tables up itself).

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
