import { afterAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildDist, DIST, ENTRY_POINTS, PROGRAMS, readManifest, staleReason } from '../../scripts/dist.mjs';
import { removeDir, runCommand, tempDir } from '../support/child-server.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeDir));

describe('when the compiled programs must be built again', () => {
  // A project of two sources and a build of them, in a folder of its own: touching the repository's own
  // sources here would make every suite running beside this one build again.
  const project = () => {
    const root = tempDir('memory-dist-');
    dirs.push(root);
    mkdirSync(join(root, 'src'));
    mkdirSync(join(root, 'dist', 'abc'), { recursive: true });
    for (const file of ['src/a.ts', 'src/b.ts']) writeFileSync(join(root, file), '');
    const built = Date.now();
    for (const file of ['src/a.ts', 'src/b.ts']) utimesSync(join(root, file), new Date(built - 60_000), new Date(built - 60_000));
    return { root, dist: join(root, 'dist'), manifest: { id: 'abc', startedMs: built, inputs: ['src/a.ts', 'src/b.ts'] } };
  };

  test('a build whose sources are all older than its start is current', () => {
    const { root, dist, manifest } = project();
    expect(staleReason(manifest, root, dist)).toBeNull();
  });

  test('no build, a source changed after the build began, a source gone, or the build folder gone: built again', () => {
    const { root, dist, manifest } = project();
    expect(staleReason(null, root, dist)).toBe('no build yet');
    utimesSync(join(root, 'src/b.ts'), new Date(), new Date(manifest.startedMs + 1000));
    expect(staleReason(manifest, root, dist)).toBe('src/b.ts changed');
    expect(staleReason({ ...manifest, inputs: ['src/a.ts', 'src/gone.ts'] }, root, dist)).toBe('src/gone.ts is gone');
    expect(staleReason({ ...manifest, id: 'other', inputs: ['src/a.ts'] }, root, dist)).toBe('dist/other is gone');
  });
});

describe('the build', () => {
  test('is named by its content, lists every source it read and the lockfiles, and is current once made', async () => {
    const first = await buildDist();
    const second = await buildDist();
    expect(second.id).toBe(first.id);
    expect(readManifest()).toEqual(second);
    expect(second.inputs).toEqual(expect.arrayContaining([...Object.values(ENTRY_POINTS), 'scripts/dist.mjs', 'package-lock.json', 'node_modules/.package-lock.json']));
    expect(second.inputs.filter((input) => input.startsWith('node_modules/'))).toEqual(['node_modules/.package-lock.json']);
    expect(staleReason(second)).toBeNull();
    expect(DIST.endsWith('dist')).toBe(true);
  }, 60_000);

  test('the launcher runs a program by name from any directory, and refuses another name', async () => {
    const elsewhere = tempDir('memory-dist-cwd-');
    dirs.push(elsewhere);
    const launch = join(DIST, '..', 'scripts', 'launch.mjs');
    const help = spawnSync(process.execPath, [launch, 'memory', '--help'], { cwd: elsewhere, encoding: 'utf8' });
    expect(help).toMatchObject({ status: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: npm run --silent memory -- <command>/);
    const wrong = await runCommand(process.execPath, [launch, 'search-worker'], { PATH: process.env.PATH ?? '' });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toBe(`usage: node scripts/launch.mjs <${PROGRAMS.join('|')}> [arguments]\n`);
  });
});
