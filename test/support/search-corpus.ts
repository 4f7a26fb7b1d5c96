import { mulberry32 } from '../../bench/corpus.js';
import type { SearchDocument } from '../../shared/search/document.js';
import type { TextQuery } from '../../shared/search/query.js';

/** Random corpora and queries for the engine's tests: seeded, so every run sees the same ones. */

/** A small seeded PRNG, so that every corpus is the same on every run. */
export const prng = mulberry32;

/** Words with Zipf-like frequencies: a few everywhere (they fill many blocks), most rare. */
export const VOCABULARY = Array.from({ length: 400 }, (_, i) => `w${i.toString(36)}x`);
/** `count` documents numbered from `firstDoc`: titles of 1 to 8 words, bodies of up to 40. */
export function corpus(seed: number, count: number, firstDoc = 1): SearchDocument[] {
  const random = prng(seed);
  const word = () => VOCABULARY[Math.min(VOCABULARY.length - 1, Math.floor(1 / (random() * 0.995 + 0.005)) - 1 + Math.floor(random() * 3))]!;
  const text = (n: number) => Array.from({ length: n }, word).join(' ');
  return Array.from({ length: count }, (_, i) => ({ doc: firstDoc + i, title: text(1 + Math.floor(random() * 8)), body: text(Math.floor(random() * 40)) }));
}

/** `count` queries of 1 to 4 of the commoner words, a third with a two-word phrase. */
export function queries(seed: number, count: number): TextQuery[] {
  const random = prng(seed);
  const word = () => VOCABULARY[Math.floor(random() ** 3 * 60)]!;
  return Array.from({ length: count }, () => ({
    terms: Array.from({ length: 1 + Math.floor(random() * 4) }, word),
    phrases: random() < 0.3 ? [[word(), word()]] : [],
  }));
}

