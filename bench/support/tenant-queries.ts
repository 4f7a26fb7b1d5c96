import { mulberry32 } from '../corpus.js';
import { QUERY_STOP_WORDS } from '../../shared/domain/stop-words.js';

/** A small seeded PRNG, uniform in [0, 1): the tenant benchmark never uses Math.random. */
export const seededRandom = mulberry32;

/** The words of a text a query can use: letters only, at least 3 of them, none that a query drops (QUERY_STOP_WORDS); lower-cased, distinct, in order. */
export function queryableWords(text: string): string[] {
  const seen = new Set<string>();
  for (const word of text.toLowerCase().split(/[^\p{L}]+/u)) {
    if (word.length >= 3 && !QUERY_STOP_WORDS.has(word)) seen.add(word);
  }
  return [...seen];
}

/**
 * A query of 1 to 3 words (as many as the text has, up to the drawn count) taken from `text` at random,
 * as an agent recalls a memory by a few of its words; null when the text has no usable word.
 */
export function queryFrom(text: string, rng: () => number): string | null {
  const words = queryableWords(text);
  if (words.length === 0) return null;
  const count = Math.min(words.length, 1 + Math.floor(rng() * 3));
  const picked: string[] = [];
  const pool = [...words];
  for (let i = 0; i < count; i++) picked.push(pool.splice(Math.floor(rng() * pool.length), 1)[0]!);
  return picked.join(' ');
}

/** `count` items drawn from `items` with replacement, by `rng`. */
export function drawMany<T>(items: readonly T[], count: number, rng: () => number): T[] {
  if (items.length === 0) throw new Error('cannot draw from an empty list');
  return Array.from({ length: count }, () => items[Math.floor(rng() * items.length)]!);
}

/** `count` distinct items from `items` (all of them if there are fewer), in a random order, by `rng`. */
export function drawDistinct<T>(items: readonly T[], count: number, rng: () => number): T[] {
  const pool = [...items];
  const n = Math.min(count, pool.length);
  // The first n steps of a Fisher–Yates shuffle.
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(rng() * (pool.length - i));
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
  }
  return pool.slice(0, n);
}

/** Resident memory of a process in MiB, from a /proc/<pid>/status text: the current (VmRSS) and the peak (VmHWM). */
export function residentMiB(status: string): { rss: number; peak: number } {
  const kib = (field: string) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!match) throw new Error(`no ${field} in the process status`);
    return Number(match[1]) / 1024;
  };
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}
