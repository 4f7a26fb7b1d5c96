import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { CursorSealer } from '../../../domain/cursor-sealer.js';

/** Where the listing cursors' key is: the secret, and the region of the client that reads it. */
export interface CursorKeySettings {
  secretArn: string;
  region: string;
}

/**
 * The sealer of listing cursors, with the key that is the value of a Secrets Manager secret (a generated
 * string, or binary), read through Powertools Parameters. The secret is read on the first call, not at
 * import, so a cold start never fails for it: a failed read throws from that call (the request answers 500
 * with its request id, the cause in the log) and is not kept, so the next call reads again. A read that
 * succeeds is kept for the life of the process, one cold start: a changed secret is seen by new instances only.
 */
export function cursorSealerFromSecret({ secretArn, region }: CursorKeySettings): () => Promise<CursorSealer> {
  const provider = new SecretsProvider({ clientConfig: { region } });
  let sealer: Promise<CursorSealer> | undefined;
  const read = async (): Promise<CursorSealer> => {
    let value: string | Uint8Array | undefined;
    try {
      // maxAge 0: nothing in Powertools' cache; this function keeps the sealer, and only once it is built.
      value = await provider.get(secretArn, { maxAge: 0 });
    } catch (error) {
      throw new Error(`cannot read the listing cursors' key from Secrets Manager (${secretArn}): ${(error as Error).message}`, { cause: error });
    }
    if (value === undefined) throw new Error(`the listing cursors' key secret ${secretArn} has no value`);
    return new CursorSealer(typeof value === 'string' ? Buffer.from(value, 'utf8') : value);
  };
  return () =>
    (sealer ??= read().catch((error: unknown) => {
      sealer = undefined;
      throw error;
    }));
}
