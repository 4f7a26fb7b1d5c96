import type { ListQuery, MemoryClient } from '../sdk/src/index.js';
import { LIMITS } from '../shared/domain/limits.js';

/** The memory CLI's `export`: every record of a listing as NDJSON on stdout, streamed page by page. */

/** What export returns: it wrote its records itself, so there is nothing more to print. */
export const STREAMED = Symbol('streamed');

/** Records per page of an export: the API's largest page. */
export const EXPORT_PAGE = LIMITS.searchLimitMax;

/** How often a progress line is rewritten in a terminal, and how long an export runs before the first. */
const PROGRESS_MS = 1000;

/**
 * Writes every record of the listing to stdout as NDJSON, a page at a time, oldest first: the SDK's
 * iterator holds one page, and a full pipe is waited for ('drain'), so an export of any size takes the
 * memory of one page. A reader that goes away (`| head`) ends it quietly. Progress goes to stderr: in a
 * terminal one line rewritten each second once the export has run a second, with `--progress` one line
 * per page wherever stderr goes; else nothing, so that stderr stays the JSON of an error for scripts.
 */
export async function exportRecords(client: MemoryClient, query: ListQuery, progress: 'off' | 'terminal' | 'every-page'): Promise<typeof STREAMED> {
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
