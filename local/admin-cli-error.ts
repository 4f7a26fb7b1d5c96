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

/** A malformed command line: exit code 2. */
export const usage = (message: string) => new CliError('usage', message, 2);

/** What went wrong, as a line of an error message. */
export const causeOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
