import { createHash, randomBytes } from 'node:crypto';

/** Prefix of every API key, so that a leaked key is easy to recognise in logs and secret scanners. */
export const API_KEY_PREFIX = 'mem_';

/** A new API key: the prefix and 32 random bytes in base64url (256 bits of entropy). */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** The SHA-256 hash (hex) under which a key is stored; the key itself is never stored. */
export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}

/** A new key id: a public, non-secret handle for listing and revoking a key. */
export function generateKeyId(): string {
  return 'key_' + randomBytes(8).toString('hex');
}

/**
 * The value of the API Gateway API key that stands for a service key in usage plans (the authorizer's
 * `usageIdentifierKey`). API Gateway wants 20 to 128 alphanumeric characters, and a key id has an
 * underscore, so the value is `memorykey` and the id's 16 hex digits. It is no secret: the authorizer
 * has already authenticated the caller by the key itself.
 */
export function gatewayKeyValue(keyId: string): string {
  return `memorykey${keyId.replace(/^key_/, '')}`;
}

/** True when `ref` looks like a key id rather than an API key. */
export function isKeyId(ref: string): boolean {
  return /^key_[0-9a-f]{16}$/.test(ref);
}

/**
 * Reads the token from an `Authorization` header: the scheme word `Bearer` in any case, one or more
 * spaces, and a non-empty token. Returns null for a missing header, another scheme or an empty token.
 */
export function bearerToken(header: string | undefined): string | null {
  if (header === undefined) return null;
  const m = /^bearer +(\S+) *$/i.exec(header);
  return m ? m[1]! : null;
}
