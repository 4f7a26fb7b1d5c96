/**
 * The benchmark's corpus: a deterministic, streaming generator of agent memories that read like the real
 * thing, and the search workload that goes with it. Same `records` and `seed`, same corpus, byte for byte.
 *
 * - Tenants of very different sizes (half the records down to half a percent), each with a domain
 *   (support, sales, engineering, a clinic, a personal assistant) whose nouns, agents and clients it uses.
 * - All six types, each with its own title and body templates ("Decided to …", "Follow up with … about …").
 * - Every slot draws its word from a list ranked by frequency with Zipf's law (s = 1), so a few words are
 *   everywhere and most are rare; made-up code names and ticket numbers give the long tail of words that
 *   occur only a handful of times, as names do in real notes.
 * - Titles of 5 to 25 words; bodies of 50 bytes to 8 KiB, log-normal (median about 300 bytes).
 *
 * Records are drawn one at a time from one seeded PRNG, so `queryWorkload` can read the start of the very
 * corpus a run writes (up to 50 000 records) and build its queries from words that are certain to occur.
 *
 * Its parts: corpus-tenants.ts (the tenants and options), corpus-random.ts (the seeded draws),
 * corpus-vocabulary.ts and corpus-words.ts (the words and templates), corpus-generator.ts (the records)
 * and corpus-workload.ts (the searches). The benchmarks and the tests import them from here.
 */
export { BODY_BYTES, generateCorpus, TITLE_WORDS, type CorpusRecord } from './corpus-generator.js';
export { mulberry32 } from './corpus-random.js';
export { DEFAULT_SEED, tenantsFor, type CorpusOptions, type Domain, type TenantSpec } from './corpus-tenants.js';
export { QUERY_KINDS, queryWorkload, type BenchQuery, type QueryKind } from './corpus-workload.js';
