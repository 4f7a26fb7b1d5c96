/**
 * Inputs and the terms both engines must give for them (docs/api.md, "How `q` is read"): checked against
 * the embedded analyzer in test/unit/analyzer.test.ts and against OpenSearch's `_analyze` with the records
 * template's analyzer in test/ports/opensearch.test.ts (when OPENSEARCH_URL is set). Terms are listed as
 * OpenSearch lists tokens: by position, an identifier whole before its first word at the same position.
 */
export const ANALYZER_CASES: readonly { text: string; terms: string[] }[] = [
  { text: "What's the user's name?", terms: ['what', 'the', 'user', 'name'] },
  { text: 'What’s the user’s name?', terms: ['what', 'the', 'user', 'name'] },
  { text: "the users' keys", terms: ['the', 'user', 'kei'] },
  { text: "don't we're it'll I'm you've he'd", terms: ['don', 'we', 'it', 'i', 'you', 'he'] },
  { text: "O'Brien rock'n'roll", terms: ['o', 'brien', 'rock', 'n', 'roll'] },
  { text: 'INV-2024-0042 paid', terms: ['inv-2024-0042', 'inv', '2024', '0042', 'paid'] },
  { text: 'ERR_CONN_RESET again', terms: ['err_conn_reset', 'err', 'conn', 'reset', 'again'] },
  { text: 'pinned to v1.2.3.', terms: ['pin', 'to', 'v1.2.3', 'v1', '2', '3'] },
  { text: 'see src/lib/retry.ts', terms: ['see', 'src/lib/retry.ts', 'src', 'lib', 'retri', 'ts'] },
  { text: 'e-mail on-call', terms: ['e', 'mail', 'on', 'call'] },
  { text: 'Running RUNS ran', terms: ['run', 'run', 'ran'] },
];
