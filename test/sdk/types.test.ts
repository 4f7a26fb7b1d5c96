import { readFileSync } from 'node:fs';
import { describe, expect, test } from '@jest/globals';
import { SDK_TYPES_FILE, sdkTypesSource } from '../../scripts/generate-sdk-types.js';

describe('the SDK types', () => {
  test('are what the API schemas generate today (regenerate with npm run generate)', async () => {
    expect((await sdkTypesSource()) === readFileSync(SDK_TYPES_FILE, 'utf8')).toBe(true);
  });
});
