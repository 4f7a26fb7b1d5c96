import { DEFAULT_API_URL } from '../mcp/api.js';

/** The memory CLI's --help. */
export const HELP = `Usage: npm run --silent memory -- <command> [options]

  remember --agent <id> --type <type> --title <text> --body <text | -> [--client <c>] [--metadata <json>]
           [--supersedes <id>]... [--idempotency-key <key>]
  recall [<words>...] [--type <type>] [--agent <id>] [--client <c>] [--since <date>] [--until <date>]
         [--limit <n>] [--include-superseded] [--min-rank <0..1>]
  classify --title <text> --body <text | ->
  get <id>
  update <id> [--title <text>] [--body <text | ->] [--type <type>] [--client <c> | --no-client]
              [--metadata <json> | --no-metadata] [--if-version <n>]
  list [--agent <id>] [--type <type>] [--client <c>] [--since <date>] [--until <date>] [--order desc|asc]
       [--limit <n>] [--cursor <next_cursor>] [--include-superseded]
  export [--agent <id>] [--type <type>] [--client <c>] [--since <date>] [--until <date>]
         [--include-superseded] [--progress]
  delete <id>
  forget [--agent <id>] [--client <c>] [--type <type>] [--before <date>] [--id <id>]... [--dry-run]
  forget-status <job_id>
  usage

  --body -     reads the body from stdin
  --agent-id   the same as --agent
  types        fact, decision, exchange, deliverable, open_item, signal (see docs/api.md)
  recall       free English text, best match first; without words, the newest records first
  --min-rank   recall leaves out hits ranked below it (0 to 1), so it may print []; see docs/api.md, "Rank",
               for the suggested cut-off
  update       corrects a record in place (a typo, a wrong value): only the fields given change, and
               --no-client / --no-metadata remove them; prints the record, one version more. With
               --if-version <n> it changes nothing unless the record is still at version n
               (version_conflict otherwise: get it again). Not retried after a lost answer unless
               --if-version is given
  --supersedes remember a new fact that replaces an old one ("switched to light mode" replacing
               "prefers dark mode"), keeping it as history: the old record gets superseded_by, and
               recall, list and export leave it out unless --include-superseded is given
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
