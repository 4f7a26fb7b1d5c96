#!/usr/bin/env node
// @ts-check
/**
 * `node scripts/launch.mjs <program> [args…]`: runs one of the compiled programs of dist/ (scripts/dist.mjs)
 * with the arguments after its name, building dist/ first when there is no build or a source is newer than
 * it. Every npm script that runs a program (`npm start`, `npm run admin`, `memory`, `mcp`, `dynamodb-local`)
 * goes through here, so `npm ci && npm start` is still the whole set-up and a `git pull` needs no build step.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { currentBuild, DIST, PROGRAMS } from './dist.mjs';

const [name, ...args] = process.argv.slice(2);
if (name === undefined || !PROGRAMS.includes(name)) {
  process.stderr.write(`usage: node scripts/launch.mjs <${PROGRAMS.join('|')}> [arguments]\n`);
  process.exit(2);
}
// A JSON line, as the admin and memory CLIs print nothing else on stderr.
const manifest = await currentBuild((line) => process.stderr.write(`${JSON.stringify({ progress: `${name}: ${line}` })}\n`));
const file = join(DIST, manifest.id, `${name}.js`);
// The server's logged stack traces name the TypeScript sources (the build writes linked source maps). Not
// the command-line programs: reading a map costs a command about 20 ms, and they print errors as JSON, not
// stacks (NODE_OPTIONS=--enable-source-maps turns maps on for any of them).
if (name === 'server') process.setSourceMapsEnabled(true);
// The program sees the command line it would have had as `node dist/<id>/<name>.js args…`.
process.argv = [process.argv[0] ?? process.execPath, file, ...args];
await import(pathToFileURL(file).href);
