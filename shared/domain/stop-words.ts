/**
 * English stop words: the set Lucene's EnglishAnalyzer uses, which is also OpenSearch's `_english_` list,
 * so that both search backends ignore the same words.
 */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set([
  'a', 'an', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'for', 'if', 'in', 'into', 'is', 'it', 'no', 'not',
  'of', 'on', 'or', 'such', 'that', 'the', 'their', 'then', 'there', 'these', 'they', 'this', 'to', 'was',
  'will', 'with',
]);

/**
 * English's other function words, which a query's free terms leave out when the query keeps something else
 * to match: pronouns, auxiliary verbs, determiners, prepositions, conjunctions and question words. They
 * carry the shape of a question ("when did we…", "what does she…") and not what it is about. Agents mostly
 * search with whole questions, and on the project's quality sets dropping these ranks better on every set
 * (docs/benchmarks.md, "Ranking parameters"). A query made only of them ("what did you do?") searches
 * with them instead of finding nothing. Left in: words that are also names or content ("may", "us", "one",
 * "up"). Quoted phrases keep every word, and records are indexed whole: only the query drops them.
 */
export const QUERY_FUNCTION_WORDS: ReadonlySet<string> = new Set([
  // question words
  'what', 'when', 'where', 'which', 'who', 'whom', 'whose', 'why', 'how',
  // auxiliary and modal verbs
  'am', 'were', 'been', 'being', 'do', 'does', 'did', 'has', 'have', 'had', 'can', 'could', 'shall', 'should', 'would', 'might', 'must',
  // pronouns
  'i', 'me', 'my', 'mine', 'myself', 'we', 'our', 'ours', 'you', 'your', 'yours', 'he', 'him', 'his', 'she', 'her', 'hers', 'its', 'itself', 'them', 'theirs', 'themselves',
  // determiners and quantifiers
  'those', 'some', 'any', 'each', 'every', 'all', 'both', 'either', 'neither', 'other', 'another', 'more', 'most', 'less', 'much', 'many', 'few', 'same', 'own',
  // prepositions
  'about', 'above', 'after', 'against', 'among', 'before', 'below', 'between', 'during', 'from', 'off', 'over', 'through', 'under', 'until', 'within', 'without', 'upon', 'onto', 'via', 'per',
  // conjunctions and adverbs of degree
  'nor', 'so', 'than', 'because', 'while', 'whether', 'although', 'though', 'here', 'very', 'too', 'also', 'just', 'only',
]);

/** Every word a query with other content leaves out of its free terms: the stop words and the function words. */
export const QUERY_STOP_WORDS: ReadonlySet<string> = new Set([...ENGLISH_STOP_WORDS, ...QUERY_FUNCTION_WORDS]);
