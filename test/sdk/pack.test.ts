/**
 * The SDKs as a user installs them, away from this repository: `npm pack` in sdk/ gives a tarball that
 * installs offline into a fresh project, imports and type-checks there (and a wrong call fails the type
 * check); the Python package builds a wheel offline, with its type information.
 */
import { expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, ROOT, tempDir } from '../support/child-server.js';

function run(command: string, args: string[], cwd: string): { status: number | null; output: string } {
  const done = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 120_000, env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' } });
  return { status: done.status, output: `${done.stdout ?? ''}${done.stderr ?? ''}` };
}

function ok(command: string, args: string[], cwd: string): string {
  const { status, output } = run(command, args, cwd);
  if (status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${status}:\n${output.slice(-4000)}`);
  return output;
}

const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

test('npm pack in sdk/ gives a tarball that installs offline into a fresh project, runs there and type-checks', () => {
  const dir = tempDir('sdk-pack-');
  try {
    ok('npm', ['pack', '--pack-destination', dir], join(ROOT, 'sdk'));
    const [tarball] = readdirSync(dir).filter((f) => f.endsWith('.tgz'));
    expect(tarball).toBe('agent-memory-sdk-0.1.0.tgz');
    const app = join(dir, 'app');
    ok('mkdir', ['-p', app], dir);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', type: 'module', private: true }));
    ok('npm', ['install', '--offline', join(dir, tarball!)], app);
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: false, types: [] }, include: ['*.ts'] }),
    );
    // What the README shows, typed by the package's own declarations.
    writeFileSync(
      join(app, 'main.ts'),
      `import { MemoryClient, type MemoryRecord } from '@agent-memory/sdk';
const memory = new MemoryClient({ baseUrl: 'http://127.0.0.1:8787', apiKey: 'mem_x' });
export async function demo(): Promise<MemoryRecord[]> {
  await memory.remember({ agent_id: 'a', type: 'fact', title: 'The user prefers dark mode', body: 'Monday.' });
  return memory.recall({ q: 'dark mode', limit: 5, min_rank: 0.1 });
}
`,
    );
    ok(process.execPath, [TSC, '-p', '.'], app);
    // The package runs as installed: its ESM entry point loads, with no dependency to fetch.
    expect(ok(process.execPath, ['--input-type=module', '-e', "import('@agent-memory/sdk').then((m) => console.log(typeof m.MemoryClient))"], app).trim()).toBe('function');
    // And the type check is real: a record type the API does not have fails it.
    writeFileSync(join(app, 'wrong.ts'), `import { MemoryClient } from '@agent-memory/sdk';\nvoid new MemoryClient({ baseUrl: 'http://x', apiKey: 'k' }).remember({ agent_id: 'a', type: 'note', title: 't', body: 'b' });\n`);
    const wrong = run(process.execPath, [TSC, '-p', '.'], app);
    expect(wrong.status).not.toBe(0);
    expect(wrong.output).toContain('wrong.ts');
  } finally {
    removeDir(dir);
  }
});

const python = ['/usr/bin/python3', 'python3'].find((p) => spawnSync(p, ['-c', 'import setuptools, wheel'], { stdio: 'ignore' }).status === 0);

(python ? test : test.skip)('the Python package builds a wheel offline, with its type information (py.typed)', () => {
  const dir = tempDir('py-wheel-');
  try {
    ok(python!, ['-m', 'pip', 'wheel', '--no-build-isolation', '--no-deps', '--no-index', '-w', dir, join(ROOT, 'python')], ROOT);
    const [wheel] = readdirSync(dir).filter((f) => f.endsWith('.whl'));
    expect(wheel).toBe('agent_memory-0.1.0-py3-none-any.whl');
    const names = ok(python!, ['-c', `import sys, zipfile; print("\\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))`, join(dir, wheel!)], ROOT).split('\n');
    expect(names).toEqual(expect.arrayContaining(['agent_memory/__init__.py', 'agent_memory/client.py', 'agent_memory/py.typed']));
  } finally {
    removeDir(dir);
  }
});
