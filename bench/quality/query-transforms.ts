/**
 * Query transforms that tune.ts compares with the service's own parsing (the index unchanged).
 */
import { MAX_QUERY_CLAUSES, parseQuery, searchableText } from '../../shared/domain/query-parse.js';
import type { TextQuery } from '../../shared/search/query.js';

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
