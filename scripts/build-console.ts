/**
 * Builds the console (console/src, TypeScript) into console/public/console.js with esbuild: one minified ES
 * module, the SDK bundled in. `npm run generate` runs it, and the file is committed, so `npm start` and the
 * CDK deployment serve it as is, with no build at run time; test/unit/console-bundle.test.ts fails while
 * the committed file differs from a fresh build.
 */
import { build } from 'esbuild';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const CONSOLE_BUNDLE = fileURLToPath(new URL('../console/public/console.js', import.meta.url));
const ENTRY = fileURLToPath(new URL('../console/src/main.ts', import.meta.url));

/** The bundle's text, as esbuild builds it from the sources (deterministic for a given esbuild version). */
export async function buildConsole(): Promise<string> {
  const result = await build({
    entryPoints: [ENTRY],
    bundle: true,
    format: 'esm',
    // Safari from 16.4: the service's rules of text, which the console reads queries with, use a regular expression's lookbehind.
    target: ['es2022', 'chrome110', 'firefox115', 'safari16.4'],
    minify: true,
    charset: 'utf8',
    legalComments: 'none',
    write: false,
    logLevel: 'silent',
  });
  return `// Built by \`npm run generate\` (scripts/build-console.ts) from console/src. Do not edit.\n${result.outputFiles[0]!.text}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(CONSOLE_BUNDLE, await buildConsole());
  process.stderr.write(`wrote ${CONSOLE_BUNDLE}\n`);
}
