/**
 * The Python SDK (python/): installed with `pip install --no-build-isolation ./python` into a fresh virtual
 * environment, then its unittest suite run with that environment's Python against the real local server
 * (the suite starts the server itself).
 *
 * These machines reach no Python package index, so the build uses the system's setuptools and wheel (Debian's
 * python3-setuptools and python3-wheel, seen through `--system-site-packages`). A python3 without them runs
 * the suite from the source tree instead, and the run says that the install was not checked; without any
 * python3 (3.9 or later) the suite is one skipped test that says so. `.ci/run` installs what is missing.
 */
import { expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, ROOT, tempDir } from '../support/child-server.js';

const CANDIDATES = [...new Set([process.env.PYTHON, 'python3', '/usr/bin/python3'].filter((p): p is string => !!p))];
const works = (python: string, modules: string) =>
  spawnSync(python, ['-c', `import sys, ${modules}; sys.exit(0 if sys.version_info >= (3, 9) else 1)`], { stdio: 'ignore' }).status === 0;
/** A Python that can build and install the package offline. */
const installer = CANDIDATES.find((python) => works(python, 'venv, ensurepip, setuptools, wheel'));
/** A Python that can at least run the suite from the source tree. */
const runner = installer ?? CANDIDATES.find((python) => works(python, 'unittest'));

/** Runs a command from the repository root; throws with its output when it fails. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): string {
  const done = spawnSync(command, args, { cwd: ROOT, env, encoding: 'utf8', timeout: 170_000 });
  const output = `${done.stdout ?? ''}${done.stderr ?? ''}`;
  if (done.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${done.status ?? done.signal}:\n${output.slice(-6000)}`);
  return output;
}

/** The suite's environment: this project's node for the server, nothing of a developer's service settings. */
function suiteEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE: process.execPath, PYTHONDONTWRITEBYTECODE: '1', ...extra };
  for (const key of Object.keys(env)) if (key.startsWith('MEMORY_')) delete env[key];
  return env;
}

/** `-t python` puts python/ (the tests package) on the path; agent_memory comes from PYTHONPATH or the venv. */
const SUITE = ['-m', 'unittest', 'discover', '-s', 'python/tests', '-t', 'python'];

if (installer) {
  test(`pip installs ./python into a fresh virtual environment (${installer}), and its unittest suite passes against the local server`, () => {
    const dir = tempDir('agent-memory-venv-');
    try {
      run(installer, ['-m', 'venv', '--system-site-packages', join(dir, 'venv')]);
      const python = join(dir, 'venv', 'bin', 'python');
      // From a copy: pip builds in the source tree, which would leave build/ and *.egg-info in the checkout.
      cpSync(join(ROOT, 'python'), join(dir, 'package'), { recursive: true, filter: (path) => !path.includes('__pycache__') });
      run(python, ['-m', 'pip', 'install', '--quiet', '--no-build-isolation', '--no-index', join(dir, 'package')]);
      const output = run(python, SUITE, suiteEnv({ PYTHONPATH: '' }));
      expect(output).toMatch(/\nOK\n?$/);
    } finally {
      removeDir(dir);
    }
  }, 180_000);
} else if (runner) {
  test(`the Python SDK's unittest suite passes from the source tree (${runner} has no setuptools and wheel, so pip install ./python was not checked)`, () => {
    const output = run(runner, SUITE, suiteEnv({ PYTHONPATH: join(ROOT, 'python', 'src') }));
    expect(output).toMatch(/\nOK( \(skipped=1\))?\n?$/);
  }, 180_000);
} else {
  test.skip('the Python SDK: no python3 (3.9 or later) here, so its tests did not run', () => {});
}
