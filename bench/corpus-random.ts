/** The corpus' randomness: one seeded stream, never Math.random, and the draws made from it. */

/** A source of uniform numbers in [0, 1). */
export type Rng = () => number;

// Bound once: inside a vm context (Jest), every read of a global such as `Math` goes through a slow
// interceptor, which made the generator five times slower there.
const { imul, floor } = Math;

/** mulberry32: a small, fast 32-bit PRNG, uniform in [0, 1): the same seed, the same sequence. The one the benchmarks and tests draw from. */
export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = imul(a ^ (a >>> 15), 1 | a);
    t = (t + imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A standard normal draw (Box–Muller). */
export function normal(rng: Rng): number {
  return Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng());
}

/**
 * Draws items by rank with Zipf's law: the item of rank k (from 1) with weight 1 / k^s. Walker's alias
 * method makes a draw O(1) from one uniform number, which matters at millions of draws per second.
 */
export class Zipf<T> {
  private readonly threshold: Float64Array;
  private readonly alias: Uint32Array;

  constructor(
    readonly items: readonly T[],
    s = 1,
  ) {
    const n = items.length;
    if (n === 0) throw new Error('Zipf needs at least one item');
    const weights = Array.from({ length: n }, (_, k) => 1 / (k + 1) ** s);
    const total = weights.reduce((a, b) => a + b, 0);
    const scaled = weights.map((w) => (w * n) / total);
    this.threshold = new Float64Array(n).fill(1);
    this.alias = new Uint32Array(n).map((_, i) => i);
    const small = scaled.flatMap((p, i) => (p < 1 ? [i] : []));
    const large = scaled.flatMap((p, i) => (p >= 1 ? [i] : []));
    while (small.length > 0 && large.length > 0) {
      const lo = small.pop()!;
      const hi = large.at(-1)!;
      this.threshold[lo] = scaled[lo]!;
      this.alias[lo] = hi;
      scaled[hi] = scaled[hi]! + scaled[lo]! - 1;
      if (scaled[hi]! < 1) small.push(large.pop()!);
    }
  }

  /** One item, drawn with its rank's weight. */
  pick(rng: Rng): T {
    const x = rng() * this.threshold.length;
    const i = floor(x);
    return this.items[x - i < this.threshold[i]! ? i : this.alias[i]!]!;
  }
}

/** One item of the list, each as likely. */
export const pickOne = <T>(items: readonly T[], rng: Rng): T => items[floor(rng() * items.length)]!;

/** n, kept within [lo, hi]. */
export const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, n));
