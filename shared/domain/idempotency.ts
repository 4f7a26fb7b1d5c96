import { createHash } from 'node:crypto';
import { AppError } from './errors.js';
import { LIMITS, type RecordInput } from './record.js';

/** How long an idempotency key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** The characters an `Idempotency-Key` may hold: visible ASCII, 0x21 to 0x7E (its length is limited apart). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]+$/;

/** What a store needs to make a write idempotent. */
export interface IdempotencyClaim {
  key: string;
  /** SHA-256 of the canonical request, to tell a retry from a different request under the same key. */
  requestHash: string;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Hashes a validated write so that two requests that store the same record hash alike: key order and
 * white space do not count, and neither does `null` against an absent `client` or `metadata`, which both
 * mean "not given".
 */
export function requestHash(input: RecordInput): string {
  const stored = { ...input, client: input.client ?? null, metadata: input.metadata ?? null };
  return createHash('sha256').update(canonical(stored), 'utf8').digest('hex');
}

/**
 * Reads the optional `Idempotency-Key` header value: absent means no idempotency; present, it must be 1 to
 * 255 characters of visible ASCII, or the request answers 400 invalid_field.
 */
export function readIdempotencyKey(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.length === 0 || value.length > LIMITS.idempotencyKeyChars || !IDEMPOTENCY_KEY_PATTERN.test(value)) {
    throw new AppError(
      'invalid_field',
      `Idempotency-Key must be 1 to ${LIMITS.idempotencyKeyChars} visible ASCII characters`,
    );
  }
  return value;
}
