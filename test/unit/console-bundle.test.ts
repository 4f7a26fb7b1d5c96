/**
 * The console's committed bundle (console/public/console.js) is exactly what its sources build to, and the
 * sources never turn text into HTML: every record field is shown with text nodes (console/src/dom.ts).
 */
import { expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildConsole, CONSOLE_BUNDLE } from '../../scripts/build-console.js';
import { ROOT } from '../support/child-server.js';

test('console/public/console.js is what `npm run generate` builds from console/src', async () => {
  expect(readFileSync(CONSOLE_BUNDLE, 'utf8')).toBe(await buildConsole());
});

test('the console sources parse no HTML: no innerHTML, outerHTML, insertAdjacentHTML, document.write or DOMParser', () => {
  const dir = join(ROOT, 'console/src');
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  expect(files.length).toBeGreaterThan(5);
  for (const file of files) {
    const text = readFileSync(join(dir, file), 'utf8');
    expect({ file, found: text.match(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|DOMParser|createContextualFragment/g) }).toEqual({ file, found: null });
  }
});
