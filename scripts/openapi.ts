/**
 * Writes docs/openapi.json, the OpenAPI 3.1 document that shared/api/openapi.ts builds from the zod
 * schemas. `npm run generate` runs it; test/unit/openapi.test.ts fails when the committed file is stale.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openApiJson } from '../shared/api/openapi.js';

export const OPENAPI_FILE = fileURLToPath(new URL('../docs/openapi.json', import.meta.url));

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(OPENAPI_FILE, openApiJson());
  process.stderr.write(`wrote ${OPENAPI_FILE}\n`);
}
