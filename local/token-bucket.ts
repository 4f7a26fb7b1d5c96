interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** The answer of a token bucket: allowed, or the whole seconds (at least 1) until a token is back. */
export type TakeResult = { ok: true } | { ok: false; retryAfter: number };

/**
 * Per-key token buckets, as API Gateway's usage plans apply them: each key refills at `rate` tokens a
 * second up to `burst`, and every request takes one.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly clock: () => number = Date.now) {}

  /** Takes a token from the key's bucket, or says how long until one is available. */
  take(key: string, rate: number, burst: number): TakeResult {
    const now = this.clock();
    const bucket = this.buckets.get(key) ?? { tokens: burst, updatedAt: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * rate);
    bucket.updatedAt = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfter: Math.max(1, Math.ceil((1 - bucket.tokens) / rate)) };
  }
}
