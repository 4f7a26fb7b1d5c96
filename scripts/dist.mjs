// @ts-check
/**
 * The compiled programs in dist/: the server, the admin CLI, the memory CLI, the MCP server and DynamoDB
 * Local's runner, each one ES module bundled by esbuild from the TypeScript sources (the packages in
 * node_modules stay imports), with the two worker threads beside them. `npm ci` builds them (the `prepare`
 * script runs this file); scripts/launch.mjs, which every npm script that runs a program goes through,
 * builds them again when a source is newer than the build (after a `git pull`, or an edit).
 *
 * Each build goes into its own folder named by its content, dist/<id>/, and dist/manifest.json names the
 * newest: a program that runs keeps loading its own build's worker threads while a newer build is written
 * beside it, and two processes that build at once write the same files.
 *
 * Plain JavaScript, so that it runs before anything is compiled, with its types checked by `tsc` (@ts-check).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const DIST = join(ROOT, 'dist');
const MANIFEST = join(DIST, 'manifest.json');

/** The programs by the name the launcher runs, and their sources. The worker threads must keep their names:
 * shared/adapters/local/thread-entry.ts finds each beside the module that starts it. */
export const ENTRY_POINTS = {
  server: 'local/server.ts',
  admin: 'local/admin.ts',
  memory: 'cli/memory.ts',
  mcp: 'mcp/server.ts',
  'dynamodb-local': 'local/dynamodb-local.ts',
  'search-worker': 'shared/adapters/local/search-worker.ts',
  'search-merge-thread': 'shared/adapters/local/search-merge-thread.ts',
  'classification-thread': 'local/classification-thread.ts',
};

/** The programs a user runs (the others are the worker threads). */
export const PROGRAMS = ['server', 'admin', 'memory', 'mcp', 'dynamodb-local'];

/**
 * The arguments of `node` that run `program` compiled, as the npm scripts do (tests and benchmarks start
 * the programs this way too).
 * @param {string} program one of PROGRAMS
 * @returns {string[]}
 */
export function launchArguments(program) {
  return [join(ROOT, 'scripts', 'launch.mjs'), program];
}

/**
 * @typedef {object} Manifest
 * @property {string} id the folder of the build under dist/
 * @property {number} startedMs when the build began to read the sources (a source changed after it is newer)
 * @property {string[]} inputs the sources it read, relative to the project root, this file included
 */

/** @returns {Manifest | null} the newest build's manifest, null when there is none or it cannot be read. */
export function readManifest() {
  try {
    return JSON.parse(readFileSync(MANIFEST, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * Why the build must be made again, or null when it is current: no build yet, or a source that is newer
 * than the build, or gone. About 160 `stat` calls, a few milliseconds.
 * @param {Manifest | null} manifest
 * @param {string} root the project the manifest's inputs are relative to
 * @param {string} dist the folder of the builds
 * @returns {string | null}
 */
export function staleReason(manifest, root = ROOT, dist = DIST) {
  if (manifest === null) return 'no build yet';
  for (const input of manifest.inputs) {
    let mtimeMs;
    try {
      mtimeMs = statSync(join(root, input)).mtimeMs;
    } catch {
      return `${input} is gone`;
    }
    if (mtimeMs > manifest.startedMs) return `${input} changed`;
  }
  try {
    statSync(join(dist, manifest.id));
  } catch {
    return `dist/${manifest.id} is gone`;
  }
  return null;
}

/**
 * Builds every entry point into dist/<id>/ and makes it the newest build. Each file is written under a
 * temporary name and renamed, and the manifest last, so a program never loads half a file.
 * @returns {Promise<Manifest>}
 */
export async function buildDist() {
  const { build } = await import('esbuild');
  const startedMs = Date.now();
  const result = await build({
    entryPoints: ENTRY_POINTS,
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // The packages are bundled too: one module to load rather than hundreds is most of a fast start (the
    // Lambda bundles are made the same way, infra/lambda-bundling.ts). Not the native SQLite driver, nor
    // DynamoDB Local's package, which finds its jar beside itself.
    external: ['better-sqlite3', 'amplify-dynamodb-simulator'],
    mainFields: ['module', 'main'],
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    outdir: DIST,
    sourcemap: 'linked',
    sourcesContent: false,
    metafile: true,
    write: false,
    logLevel: 'error',
  });
  const hash = createHash('sha256');
  for (const file of [...result.outputFiles].sort((a, b) => a.path.localeCompare(b.path))) hash.update(relative(DIST, file.path)).update(file.contents);
  const id = hash.digest('hex').slice(0, 12);
  const folder = join(DIST, id);
  mkdirSync(folder, { recursive: true });
  for (const file of result.outputFiles) write(join(folder, relative(DIST, file.path)), file.contents);

  // Our sources, this file, and the two lockfiles for the packages: npm rewrites node_modules/.package-lock.json
  // on every install, so a `npm ci` that brings other versions of the packages makes the build stale.
  const sources = Object.keys(result.metafile.inputs).filter((input) => !input.startsWith('node_modules/'));
  const inputs = [...sources, relative(ROOT, fileURLToPath(import.meta.url)), 'package-lock.json', 'node_modules/.package-lock.json'].sort();
  const previous = readManifest();
  /** @type {Manifest} */
  const manifest = { id, startedMs, inputs };
  write(MANIFEST, JSON.stringify(manifest, null, 2));
  // Keep this build and the one before it (a server started from it may still start its worker threads).
  for (const name of readdirSync(DIST)) {
    if (name !== id && name !== previous?.id && name !== 'manifest.json' && !name.includes('.tmp-')) rmSync(join(DIST, name), { recursive: true, force: true });
  }
  return manifest;
}

/**
 * @param {string} file
 * @param {string | Uint8Array} contents
 */
function write(file, contents) {
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.tmp-${process.pid}`;
  writeFileSync(temporary, contents);
  renameSync(temporary, file);
}

/** The newest build, made first when there is none or a source changed; `log` hears why it builds. */
export async function currentBuild(log = (/** @type {string} */ _line) => {}) {
  const manifest = readManifest();
  const reason = staleReason(manifest);
  if (reason === null && manifest !== null) return manifest;
  log(`building dist/ from the sources (${reason})`);
  return buildDist();
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = performance.now();
  const manifest = await buildDist();
  process.stdout.write(`dist/${manifest.id}: ${PROGRAMS.join(', ')} from ${manifest.inputs.length} sources in ${Math.round(performance.now() - started)} ms\n`);
}
