import type { Readable, Writable } from 'node:stream';
import type { Position } from '../shared/domain/listing.js';
import { idMillis, publicRecord, recordIdOf, type StoredRecord } from '../shared/domain/record.js';
import { recordInputSchema, recordSchema } from '../shared/domain/schemas.js';
import type { ImportResult, RecordStore } from '../shared/ports.js';

/**
 * The admin CLI's record commands, as streams: `export` writes a tenant's records as NDJSON a page at a
 * time, `import` reads that form back a line at a time, and `tenant delete` counts what it would erase.
 * None of them holds more than a page (or a batch) of records.
 */

/** Records per listing page of an export or a count. */
export const PAGE_SIZE = 1000;
/** Records per RecordStore.import call. */
export const IMPORT_BATCH = 500;
/** A progress line on stderr every this many records. */
export const PROGRESS_EVERY = 10_000;
/**
 * The longest line an import reads. The longest valid record is well under half of it (a 64 KiB body of
 * characters JSON escapes as `\u00XX` is 384 KiB); a longer line is reported without being held whole.
 */
export const MAX_LINE_BYTES = 1024 * 1024;

export interface StreamOptions {
  /** Progress, for stderr; called every `every` records. */
  progress?: (text: string) => void;
  pageSize?: number;
  every?: number;
}

/** Every record of the tenant, superseded ones too, oldest first (by `created_at`, then `id`), one page at a time. */
async function* pages(records: RecordStore, tenantId: string, pageSize: number): AsyncGenerator<StoredRecord[]> {
  let after: Position | undefined;
  for (;;) {
    const page = await records.list(tenantId, { filters: { include_superseded: true }, order: 'asc', limit: pageSize, after });
    if (page.length === 0) return;
    yield page;
    const last = page[page.length - 1]!;
    after = { created_at: last.created_at, id: last.id };
  }
}

/** How many records the tenant has, counted over its listing (what an export would write). */
export async function countRecords(records: RecordStore, tenantId: string, options: StreamOptions = {}): Promise<number> {
  const { pageSize = PAGE_SIZE, every = PROGRESS_EVERY } = options;
  let total = 0;
  for await (const page of pages(records, tenantId, pageSize)) {
    const before = total;
    total += page.length;
    if (Math.floor(total / every) > Math.floor(before / every)) options.progress?.(`counting: ${total} records so far`);
  }
  return total;
}

/** The output of an export failed or was closed (a reader that went away: `export … | head`). */
export class OutputFailed extends Error {
  constructor(cause: unknown) {
    super(`the output failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/**
 * Writes every record of the tenant to `out` as NDJSON, oldest first, each line the API's record shape
 * (`publicRecord`, with `classification`, `version`, `updated_at` and `superseded_by`; superseded records
 * too); returns how many. A page is written as one chunk, and the next
 * page is read only once `out` has taken that chunk (its write callback, which comes with `drain` when a
 * page is larger than the stream's buffer), so a slow reader slows the export instead of filling memory.
 * A failed or closed `out` ends the export with OutputFailed.
 */
export async function exportRecords(records: RecordStore, tenantId: string, out: Writable, options: StreamOptions = {}): Promise<number> {
  const { pageSize = PAGE_SIZE, every = PROGRESS_EVERY } = options;
  // The write callback reports a failed write; without a listener its 'error' event would end the process.
  const ignored = () => undefined;
  out.on('error', ignored);
  let total = 0;
  for await (const page of pages(records, tenantId, pageSize)) {
    let chunk = '';
    for (const record of page) chunk += `${JSON.stringify(publicRecord(record))}\n`;
    await send(out, chunk);
    const before = total;
    total += page.length;
    if (Math.floor(total / every) > Math.floor(before / every)) options.progress?.(`export: ${total} records written`);
  }
  // Only now: a failed write's 'error' event may still be on its way.
  out.off('error', ignored);
  return total;
}

/** Writes a chunk and resolves once `out` has taken it; rejects with OutputFailed when it cannot. */
function send(out: Writable, chunk: string): Promise<void> {
  if (out.errored || out.destroyed || out.writableEnded) return Promise.reject(new OutputFailed(out.errored ?? 'it was closed'));
  return new Promise((resolve, reject) => {
    out.write(chunk, (error) => (error ? reject(new OutputFailed(error)) : resolve()));
  });
}

/** One line of the input: its number (from 1) and its text, or why it could not be read as text. */
type Line = { n: number; text: string } | { n: number; problem: string };

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The lines of a stream of bytes, split at `\n` (a `\r` before it is dropped), decoded as UTF-8 strictly:
 * a line with bytes that are not UTF-8 is reported, never read with replacement characters (which would
 * import text other than the export's). A line longer than `maxBytes` is reported, and not held whole.
 */
export async function* ndjsonLines(input: Readable, maxBytes = MAX_LINE_BYTES): AsyncGenerator<Line> {
  let parts: Buffer[] = [];
  let size = 0;
  let tooLong = false;
  let n = 0;
  const finish = (): Line => {
    n++;
    if (tooLong) return { n, problem: `longer than ${maxBytes} bytes, which no record is` };
    let bytes = Buffer.concat(parts, size);
    if (n === 1 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
    if (bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, bytes.length - 1);
    try {
      return { n, text: utf8.decode(bytes) };
    } catch {
      return { n, problem: 'not UTF-8' };
    }
  };
  for await (const chunk of input) {
    const bytes: Buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer);
    let start = 0;
    for (;;) {
      const newline = bytes.indexOf(0x0a, start);
      const end = newline === -1 ? bytes.length : newline;
      if (!tooLong) {
        if (size + (end - start) > maxBytes) {
          tooLong = true;
          parts = [];
        } else if (end > start) {
          parts.push(bytes.subarray(start, end));
          size += end - start;
        }
      }
      if (newline === -1) break;
      yield finish();
      parts = [];
      size = 0;
      tooLong = false;
      start = newline + 1;
    }
  }
  if (size > 0 || tooLong) yield finish();
}

/** A record as an import stores it: the line's fields, for the tenant the import names. */
type ImportedRecord = Omit<StoredRecord, 'tenant_id'>;

/** Zod's issues as one sentence: each field named by its path. */
function describeIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  const shown = issues.slice(0, 5).map((issue) => `${issue.path.length > 0 ? issue.path.map(String).join('.') : 'record'}: ${issue.message}`);
  return shown.join('; ') + (issues.length > 5 ? `; and ${issues.length - 5} more` : '');
}

/** The fields an export written before records could be updated has not: the values every record had then. */
const BEFORE_UPDATES = { version: 1, updated_at: null, superseded_by: null } as const;

/**
 * Checks one line of an import: a JSON object of exactly the API's record shape (`recordSchema`, strict:
 * an unknown field is refused, `tenant_id` included; a line without `version`, `updated_at` or
 * `superseded_by`, as an export made before they existed, has the values of BEFORE_UPDATES), with an
 * `id` as the service makes them (a UUIDv7 in lowercase hex) from the same millisecond as `created_at` (the
 * DynamoDB listing reads time bounds as id bounds), and fields a write would accept (`recordInputSchema`:
 * lengths, sizes, blanks). The record is taken from the parsed JSON itself, not from zod's copy, so that
 * metadata keeps every key as it was.
 */
export function checkLine(text: string): { record: ImportedRecord } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: `not JSON (${(error as Error).message})` };
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) value = { ...BEFORE_UPDATES, ...value };
  const shape = recordSchema.safeParse(value);
  if (!shape.success) return { problem: describeIssues(shape.error.issues) };
  const raw = value as ImportedRecord;
  if (recordIdOf(raw.id) !== raw.id) return { problem: `id: ${JSON.stringify(raw.id)} is not a UUIDv7 in lowercase hex, as the service makes them` };
  if (idMillis(raw.id) !== Date.parse(raw.created_at)) {
    return {
      problem:
        `id: ${raw.id} was made at ${new Date(idMillis(raw.id)).toISOString()}, not at created_at ${raw.created_at}; ` +
        'the first 48 bits of a record id are the millisecond of its created_at',
    };
  }
  const lifecycle = lifecycleProblem(raw);
  if (lifecycle !== null) return { problem: lifecycle };
  const { agent_id, type, title, body, client, metadata } = raw;
  const input = recordInputSchema.safeParse({ agent_id, type, title, body, client, metadata });
  if (!input.success) return { problem: describeIssues(input.error.issues) };
  return {
    record: {
      id: raw.id,
      agent_id,
      type,
      title,
      body,
      client,
      created_at: raw.created_at,
      metadata,
      classification: raw.classification,
      version: raw.version,
      updated_at: raw.updated_at,
      superseded_by: raw.superseded_by,
    },
  };
}

/**
 * What of a record's version, updated_at and superseded_by the service could never have written
 * (decisions.md: version 1 when created and one more for each update, updated_at null until the first
 * update), or null. Whether a superseded_by names a record is not checked: it may come later in the file.
 */
function lifecycleProblem({ id, created_at, version, updated_at, superseded_by }: ImportedRecord): string | null {
  if (version === 1 && updated_at !== null) return `updated_at: ${updated_at}, but version 1 is a record never updated, whose updated_at is null`;
  if (version > 1 && updated_at === null) return `updated_at: null, but version ${version} is a record updated ${version - 1} times, whose updated_at is set`;
  if (updated_at !== null && Date.parse(updated_at) < Date.parse(created_at)) return `updated_at: ${updated_at} is before created_at ${created_at}`;
  if (superseded_by === id) return 'superseded_by: a record cannot supersede itself';
  return null;
}

/** What an import did, as the CLI prints it. */
export interface ImportTotals extends ImportResult {
  /** Lines that were not records, each reported with its line number, and not imported. */
  invalid: number;
}

export interface ImportOptions extends StreamOptions {
  /** A line that is not a record: its number and why. */
  invalidLine: (n: number, problem: string) => void;
  batchSize?: number;
}

/** A failure of the store part way through an import, with what was done before it. */
export class ImportInterrupted extends Error {
  constructor(
    cause: unknown,
    readonly totals: ImportTotals,
    /** The last line read before the failure. */
    readonly line: number,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

/**
 * Imports NDJSON records into the tenant, `batchSize` at a time. Blank lines are passed over; every other
 * line that is not a valid record goes to `invalidLine` and is not imported, and the rest are. A record
 * whose id the tenant has already is skipped (the store says so), and so is a second line with the same id
 * within a batch (the first one wins, as it would across batches), so running an import twice imports once.
 */
export async function importRecords(records: RecordStore, tenantId: string, input: Readable, options: ImportOptions): Promise<ImportTotals> {
  const { batchSize = IMPORT_BATCH, every = PROGRESS_EVERY } = options;
  const totals: ImportTotals = { imported: 0, skipped: 0, invalid: 0 };
  let batch: StoredRecord[] = [];
  let ids = new Set<string>();
  let lines = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    let result: ImportResult;
    try {
      result = await records.import(tenantId, batch);
    } catch (error) {
      throw new ImportInterrupted(error, { ...totals }, lines);
    }
    totals.imported += result.imported;
    totals.skipped += result.skipped;
    batch = [];
    ids = new Set();
  };
  for await (const line of ndjsonLines(input)) {
    lines = line.n;
    if (line.n % every === 0) {
      options.progress?.(`import: ${line.n} lines read, ${totals.imported} records imported, ${totals.skipped} skipped, ${totals.invalid} invalid`);
    }
    if ('text' in line && line.text.trim() === '') continue;
    const checked = 'problem' in line ? line : checkLine(line.text);
    if ('problem' in checked) {
      totals.invalid++;
      options.invalidLine(line.n, checked.problem);
      continue;
    }
    if (ids.has(checked.record.id)) await flush();
    batch.push({ ...checked.record, tenant_id: tenantId });
    ids.add(checked.record.id);
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  return totals;
}
