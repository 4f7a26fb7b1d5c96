/** python/src/agent_memory/types.py is exactly what `npm run generate` writes from docs/openapi.json. */
import { expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { PYTHON_TYPES_FILE, pythonTypesSource } from '../../scripts/generate-python-types.js';

test('the Python SDK types are generated from the current OpenAPI document', () => {
  expect(readFileSync(PYTHON_TYPES_FILE, 'utf8')).toBe(pythonTypesSource());
});

test('every component schema has its TypedDict, and required fields are required', () => {
  const source = pythonTypesSource();
  for (const name of ['RecordInput', 'RecordReceipt', 'SearchHit', 'Record', 'RecordPage', 'DeletedRecord', 'ForgetInput', 'ForgetResult', 'ForgetAccepted', 'ForgetJob', 'Usage', 'Suggestion', 'Classification', 'ErrorBody']) {
    expect(source).toMatch(new RegExp(`^class ${name}\\(`, 'm'));
  }
  expect(source).toContain('class _RecordInputRequired(TypedDict):\n');
  expect(source).toContain('class RecordInput(_RecordInputRequired, total=False):');
  expect(source).toContain('SearchResults = List[SearchHit]');
});
