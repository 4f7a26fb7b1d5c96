import { open as openFile } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { causeOf, CliError, usage } from './admin-cli-error.js';

/** Where a command reads and writes besides its result: stdin for import, stdout for export, stderr for progress. */
export interface AdminIo {
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable;
  stderr: Writable;
}

/** The process's own streams. */
export const processIo = (): AdminIo => ({ stdin: process.stdin, stdout: process.stdout, stderr: process.stderr });

/** One JSON line on stderr: a progress line, a bad line of an import, an export's count. */
export const jsonLine = (out: Writable, value: unknown) => out.write(`${JSON.stringify(value)}\n`);

/** An import's input, open, and how to close it. */
export interface ImportInput {
  stream: Readable;
  close(): Promise<void>;
}

/** Where an import reads: the file named (opened now, so a wrong path fails first), or stdin when it is not a terminal. */
export async function importInput(file: string | undefined, stdin: AdminIo['stdin']): Promise<ImportInput> {
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
