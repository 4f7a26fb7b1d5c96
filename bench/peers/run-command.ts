import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** Runs a command to completion; rejects with its exit status and the end of its output on failure. */
export function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; onLine?: (line: string) => void } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (stream: NodeJS.ReadableStream) => {
      const lines = createInterface({ input: stream });
      lines.on('line', (line) => {
        output += `${line}\n`;
        if (output.length > 64_000) output = output.slice(-32_000);
        options.onLine?.(line);
      });
    };
    collect(child.stdout);
    collect(child.stderr);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (code === 0) resolve(output);
      else reject(new Error(`${command} ${args.join(' ')} exited with ${signal ?? code}:\n${output.trim().split('\n').slice(-15).join('\n')}`));
    });
  });
}
