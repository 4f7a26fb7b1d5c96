import type { API } from '@opensearch-project/opensearch';
import type { ParsedQuery } from '../../../domain/query-parse.js';
import { RANKING } from '../../../domain/rank.js';
import { idf } from '../../../search/scoring.js';
import { HELD_SHARE_POWER } from '../../../search/best.js';
import { adjacentPairs } from '../../../search/query.js';
import { TITLE_BOOST } from './query.js';

type TermVectors = API.Mtermvectors_ResponseBody['docs'][number]['term_vectors'];

/**
 * The most a query can score on OpenSearch, which its ranks divide by (shared/domain/rank.ts): the same
 * bound as the embedded engine's (shared/search/best.ts), for the query OpenSearch runs (query.ts). Each
 * field is a BM25 term of its own there, so a word can score at most (k1 + 1) · idf in the title, times
 * TITLE_BOOST, plus (k1 + 1) · idf in the body, each field with its own document frequency; a phrase
 * weighs the sum of its words' IDFs, as Lucene's PhraseQuery does. The statistics are those the scores
 * use, asked of the tenant's shard: one `_mtermvectors` request with artificial documents (the query's
 * words as one, each phrase as another, each pair of adjacent words as another, which weighs
 * RANKING.proximity), analyzed by the fields' own analyzer, with term statistics.
 * Where this cannot be the engine's bound: the statistics are the shard's, every tenant routed to it
 * counted (and deleted documents until a merge drops them), not the tenant's alone; a word no record of
 * the shard holds is left out of the response, and counts at the highest IDF as it does in the engine.
 */
export function bestScoreRequest(index: string, tenantId: string, text: ParsedQuery): API.Mtermvectors_Request {
  const docs = boundTexts(text).map(({ words }) => ({
    doc: { title: words, body: words },
    fields: ['title', 'body'],
    routing: tenantId,
    term_statistics: true,
    field_statistics: true,
    positions: false,
    offsets: false,
    payloads: false,
  }));
  // An artificial document has no id; the client's type asks for one all the same.
  return { index, body: { docs: docs as unknown as NonNullable<API.Mtermvectors_RequestBody['docs']> } };
}

/**
 * The texts whose bounds add up to the query's, each with its weight: the words together, each phrase, and
 * (when proximity counts) each pair of adjacent words, as query.ts's clauses; `pair` marks the pairs, whose
 * words the query has already.
 */
function boundTexts(text: ParsedQuery): { words: string; weight: number; pair: boolean }[] {
  return [
    ...(text.terms.length > 0 ? [{ words: text.terms.join(' '), weight: 1, pair: false }] : []),
    ...text.phrases.map((phrase) => ({ words: phrase.join(' '), weight: 1, pair: false })),
    ...(RANKING.proximity > 0 ? adjacentPairs(text.terms).map((pair) => ({ words: pair.join(' '), weight: RANKING.proximity, pair: true })) : []),
  ];
}

/**
 * The bound from the `_mtermvectors` answer to bestScoreRequest for `text`: 0 when it holds no statistics.
 * As the engine's, it is divided by the square of the share of the query's weight the shard holds
 * (shared/search/best.ts): each word of the words and phrases (not the pairs, which repeat them) weighs its
 * body IDF, and is held when a title or a body of the shard has it.
 */
export function bestScoreFrom(response: API.Mtermvectors_ResponseBody, text: ParsedQuery): number {
  const texts = boundTexts(text);
  let best = 0;
  let weight = 0;
  let held = 0;
  response.docs.forEach((doc, i) => {
    const asked = texts[i];
    best += (asked?.weight ?? 1) * docBound(doc.term_vectors);
    if (asked === undefined || asked.pair) return;
    const body = doc.term_vectors?.body;
    const title = doc.term_vectors?.title;
    const docs = body?.field_statistics?.doc_count ?? 0;
    for (const [word, term] of Object.entries(body?.terms ?? {})) {
      const w = term.term_freq * idf(Math.max(docs, 1), term.doc_freq ?? 0);
      weight += w;
      if ((term.doc_freq ?? 0) > 0 || (title?.terms[word]?.doc_freq ?? 0) > 0) held += w;
    }
  });
  return held === 0 || held >= weight ? best : best / (held / weight) ** HELD_SHARE_POWER;
}

function docBound(vectors: TermVectors): number {
  let best = 0;
  for (const [field, boost] of [['title', TITLE_BOOST], ['body', 1]] as const) {
    const vector = vectors?.[field];
    const docs = vector?.field_statistics?.doc_count ?? 0;
    if (vector === undefined || docs <= 0) continue;
    for (const term of Object.values(vector.terms)) best += boost * term.term_freq * (RANKING.k1 + 1) * idf(docs, term.doc_freq ?? 0);
  }
  return best;
}
