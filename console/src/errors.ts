import { MemoryApiError, MemoryConnectionError, MemoryTimeoutError } from '../../sdk/src/index.js';

/** What the console does about a failed call: ask for a key again, or show the message where the user is. */
export interface Problem {
  kind: 'unauthorized' | 'forbidden' | 'other';
  message: string;
}

/** A readable message for any error a call can throw, naming the API's code where there is one. */
export function describe(error: unknown, baseUrl: string): Problem {
  if (error instanceof MemoryApiError) {
    if (error.status === 401) {
      return { kind: 'unauthorized', message: 'The API refused the key (401 unauthorized): it is unknown, revoked or expired. Enter a valid key.' };
    }
    if (error.status === 403) return { kind: 'forbidden', message: `Not allowed with this key (403 forbidden): ${error.message}` };
    const retry = error.retryAfter === undefined ? '' : ` Try again in ${error.retryAfter} s.`;
    const reference = error.requestId === undefined ? '' : ` (request id ${error.requestId})`;
    return { kind: 'other', message: `${error.message} (${error.status} ${error.code})${retry}${reference}` };
  }
  if (error instanceof MemoryTimeoutError) return { kind: 'other', message: `The API at ${baseUrl} did not answer in time. Try again.` };
  if (error instanceof MemoryConnectionError) {
    return {
      kind: 'other',
      message: `Cannot reach the API at ${baseUrl}. Check the base URL, and that the service is running (and, on another origin, that it allows this console).`,
    };
  }
  return { kind: 'other', message: error instanceof Error ? error.message : String(error) };
}
