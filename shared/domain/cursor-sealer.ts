import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';

/** The fewest key bytes a sealer takes: HMAC-SHA256's block of security, 256 bits. */
export const CURSOR_KEY_MIN_BYTES = 32;

/**
 * Seals listing cursors with the service's secret key: the tag is HMAC-SHA256 over the tenant and the
 * cursor's text, cut to 128 bits. Every caller knows its tenant id and can read a cursor's text, so an
 * unkeyed hash of the two would let it re-seal a cursor with another position or other filters; without
 * the key it cannot. The key comes from the composition root (kept in the database locally, in Secrets
 * Manager on AWS); a sealer holds it as a KeyObject, which prints and serializes as nothing.
 */
export class CursorSealer {
  readonly #key: KeyObject;

  constructor(key: Uint8Array) {
    if (key.length < CURSOR_KEY_MIN_BYTES) {
      throw new Error(`the listing cursors' key has ${key.length} bytes; it needs at least ${CURSOR_KEY_MIN_BYTES}`);
    }
    this.#key = createSecretKey(key);
  }

  /** The tag that binds `text` to the tenant: 22 base64url characters. */
  seal(tenantId: string, text: string): string {
    // A tenant id never holds a newline, so the newline keeps (tenant, text) pairs apart.
    return createHmac('sha256', this.#key).update(`${tenantId}\n${text}`).digest().subarray(0, 16).toString('base64url');
  }

  /** True when `check` is exactly the tag of `text` for the tenant; compared in constant time. */
  verifies(tenantId: string, text: string, check: string): boolean {
    const expected = Buffer.from(this.seal(tenantId, text));
    const given = Buffer.from(check);
    // The tag's length is no secret (it is the same for every cursor), so a wrong length may return early.
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
