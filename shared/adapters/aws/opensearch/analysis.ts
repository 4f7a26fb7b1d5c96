import { CLITIC_SOURCE, TOKEN_SOURCE } from '../../../text/tokens.js';
import { MAX_TERM_CHARS } from '../../../search/analyzer.js';

/**
 * The records analyzer on OpenSearch: the embedded engine's rules (shared/search/analyzer.ts, docs/api.md
 * "How `q` is read") built from OpenSearch's own parts, so that both engines make the same terms at the same
 * positions (test/support/analyzer-cases.ts, checked against `_analyze` in test/ports/opensearch.test.ts):
 *
 * - `memory_clitics`: the English clitics dropped (CLITIC_SOURCE, as Java reads it), before tokens are cut;
 * - `memory_tokens`: a pattern tokenizer emitting each match of TOKEN_SOURCE (group 0), a word or an identifier;
 * - `lowercase`; then `memory_identifiers`, word_delimiter_graph with preserve_original, splitting an identifier
 *   at its joiners only (no case or letter/digit splits, no possessive stemming): the whole at its first
 *   word's position, as the embedded engine indexes it;
 * - `memory_truncate` to MAX_TERM_CHARS; `memory_not_english` marks every token that is not ASCII letters only,
 *   so that `porter_stem` reduces English words alone, as the embedded engine's stemmer does.
 *
 * No stop filter: the embedded engine indexes every word (the query parser drops stop words), and lengths
 * count them. Diacritics are not folded here (the embedded engine folds those of Latin, Greek and Cyrillic):
 * docs/opensearch.md, "Where it differs".
 */
export const RECORDS_ANALYZER = 'memory_english';

/** The `analysis` section of the index settings that defines RECORDS_ANALYZER. */
export function recordsAnalysis() {
  return {
    char_filter: {
      memory_clitics: { type: 'pattern_replace', pattern: CLITIC_SOURCE, replacement: '', flags: 'CASE_INSENSITIVE' },
    },
    tokenizer: {
      memory_tokens: { type: 'pattern', pattern: TOKEN_SOURCE, group: 0 },
    },
    filter: {
      memory_identifiers: {
        type: 'word_delimiter_graph',
        preserve_original: true,
        generate_word_parts: true,
        generate_number_parts: true,
        catenate_words: false,
        catenate_numbers: false,
        catenate_all: false,
        split_on_case_change: false,
        split_on_numerics: false,
        stem_english_possessive: false,
      },
      memory_truncate: { type: 'truncate', length: MAX_TERM_CHARS },
      memory_not_english: { type: 'keyword_marker', keywords_pattern: '.*[^a-z].*' },
    },
    analyzer: {
      [RECORDS_ANALYZER]: {
        type: 'custom',
        char_filter: ['memory_clitics'],
        tokenizer: 'memory_tokens',
        filter: ['lowercase', 'memory_identifiers', 'memory_truncate', 'memory_not_english', 'porter_stem'],
      },
    },
  };
}
