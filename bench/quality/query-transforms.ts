/**
 * Query transforms that drop words from a parsed query before it is searched, the index unchanged. Small and
 * free of the benchmark, so that one could move into the engine (or the query parser) as it is; tune.ts
 * measures them.
 */
import { ENGLISH_STOP_WORDS } from '../../shared/domain/stop-words.js';
import { MAX_QUERY_CLAUSES, parseQuery, searchableText } from '../../shared/domain/query-parse.js';
import type { TextQuery } from '../../shared/search/searcher.js';

/** Lucene's English stop words (OpenSearch's `_english_`), which `parseQuery` already drops from free terms. */
export const LUCENE_STOP_WORDS: ReadonlySet<string> = ENGLISH_STOP_WORDS;

/** Question and auxiliary words that whole-question queries carry on top of Lucene's stop words. */
export const QUESTION_WORDS: ReadonlySet<string> = new Set([
  'what', 'when', 'where', 'who', 'whom', 'which', 'why', 'how', 'do', 'does', 'did', 'has', 'have', 'had',
  'i', 'we', 'you', 'me', 'my', 'our', 'about', 'from', 'can', 'could', 'should', 'would',
]);

/** Lucene's stop words and the question words together. */
export const QUESTION_STOP_WORDS: ReadonlySet<string> = new Set([...LUCENE_STOP_WORDS, ...QUESTION_WORDS]);

/**
 * The query without the free terms in `drop` (lower-case words, as the parser gives them); quoted phrases
 * are kept whole. When nothing would be left, neither a term nor a phrase, the query is returned unchanged:
 * a query made only of such words still searches with them rather than finding nothing.
 */
export function dropQueryTerms(query: TextQuery, drop: ReadonlySet<string>): TextQuery {
  const terms = query.terms.filter((t) => !drop.has(t));
  if (terms.length === query.terms.length) return query;
  if (terms.length === 0 && query.phrases.length === 0) return query;
  return { terms, phrases: query.phrases };
}

/**
 * For comparison only, not a transform: the query with every free word, as parseQuery would give it without
 * its stop list (same words, order, de-duplication and clause cap; phrases as parseQuery gives them).
 */
export function allWordsQuery(q: string): TextQuery {
  const parsed = parseQuery(q)!;
  const segments = q.split('"');
  const closed = segments.length % 2 === 1 ? segments.length : segments.length - 1;
  const terms: string[] = [];
  segments.forEach((segment, i) => {
    if (i % 2 === 1 && i < closed) return;
    for (const w of searchableText(segment).toLowerCase().match(/[\p{L}\p{N}\p{M}]+/gu) ?? []) if (!terms.includes(w)) terms.push(w);
  });
  return { phrases: parsed.phrases, terms: terms.slice(0, MAX_QUERY_CLAUSES - parsed.phrases.length) };
}
