import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AppError } from '../shared/domain/errors.js';
import { consoleCsp } from '../shared/http/cors.js';
import { errorResult } from '../shared/http/responses.js';
import type { ProxyHandler, Route } from './gateway.js';

/**
 * console/public/ of the project this module runs from: two folders up from the source (local/) and three
 * from a compiled build (dist/<id>/), so it is looked for upwards rather than at a fixed depth.
 */
function publicDir(): URL {
  for (let dir = new URL('./', import.meta.url); ; dir = new URL('../', dir)) {
    const candidate = new URL('console/public/', dir);
    if (existsSync(new URL('index.html', candidate))) return candidate;
    if (dir.pathname === '/') throw new Error(`console/public/ not found above ${fileURLToPath(import.meta.url)}`);
  }
}

/** The console's files (console/public; console.js is built by `npm run generate`), by name, with their types. */
const FILES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
};

/**
 * The headers of every console file. The policy allows the console's own script and styles only (no inline
 * script or style, no eval) and connections to this origin only, which serves the API as well; CloudFront
 * sends the same policy on AWS with the API Gateway origin instead (infra/constructs/console.ts).
 */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': consoleCsp("'self'"),
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
};

/**
 * The routes of the console at `/console/`: public, as the page itself holds no data (it asks for a key and
 * calls the API like any client). `/console` redirects to `/console/`, so the page's relative links resolve.
 * The files are read once, at the first request.
 */
export function consoleRoutes(): Route[] {
  const cache = new Map<string, string>();
  let dir: URL | undefined;
  const file = (name: string) => {
    let body = cache.get(name);
    if (body === undefined) {
      dir ??= publicDir();
      body = readFileSync(fileURLToPath(new URL(name, dir)), 'utf8');
      cache.set(name, body);
    }
    return { statusCode: 200, headers: { 'Content-Type': FILES[name]!, ...CONSOLE_HEADERS }, body };
  };
  const serve: ProxyHandler = async (event) => {
    const name = event.pathParameters?.file ?? 'index.html';
    if (!Object.hasOwn(FILES, name)) return errorResult(new AppError('not_found', `The console has no file ${name}`));
    return file(name);
  };
  const redirect: ProxyHandler = async () => ({ statusCode: 308, headers: { Location: '/console/', 'Content-Type': 'text/plain; charset=utf-8' }, body: 'The console is at /console/\n' });
  return [
    { method: 'GET', path: '/console', name: 'console', handler: redirect, public: true },
    { method: 'GET', path: '/console/', name: 'console', handler: serve, public: true },
    { method: 'GET', path: '/console/{file}', name: 'console', handler: serve, public: true },
  ];
}
