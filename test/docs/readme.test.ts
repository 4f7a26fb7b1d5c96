import { readFileSync } from 'node:fs';
import { expect, test } from '@jest/globals';
import { RECORD_TYPES } from '../../shared/domain/record-schema.js';
import { RECORD_TYPE_DESCRIPTIONS } from '../../shared/domain/schemas.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

test("the README lists the six record types with the descriptions the API and MCP's tools give", () => {
  const rows = [...README.matchAll(/^\| `([a-z_]+)` \| (.+) \|$/gm)].map(([, type, description]) => [type, description]);
  expect(rows).toEqual(RECORD_TYPES.map((type) => [type, RECORD_TYPE_DESCRIPTIONS[type]]));
});

test('the README never names a setting the clients do not read: the address is MEMORY_API_URL', () => {
  expect(README).not.toMatch(/MEMORY_URL\b/);
  expect(README).toContain('MEMORY_API_URL');
});
