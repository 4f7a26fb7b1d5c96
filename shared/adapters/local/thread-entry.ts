import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The entry of a worker thread whose module sits beside `from` (an `import.meta.url`), named `name` without
 * its extension. From compiled JavaScript, the module itself; from TypeScript source (tsx, or Jest), a small
 * ES module that first registers tsx's loader in the new thread, because Node 20 does not pass a loader given
 * with `--import` on to worker threads (nodejs/node#47747, privatenumber/tsx#354).
 */
export function threadEntry(from: string, name: string): URL {
  const ext = extname(fileURLToPath(from));
  const module = new URL(`./${name}${ext}`, from);
  if (ext !== '.ts') return module;
  const source = `import { register } from ${JSON.stringify(import.meta.resolve('tsx/esm/api'))};
register();
await import(${JSON.stringify(module.href)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(source)}`);
}
