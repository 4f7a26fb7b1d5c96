import type { IncomingMessage } from 'node:http';
import type { Fetch } from '../sdk/src/index.js';

/**
 * The SDK's requests over node:http (node:https for an https URL), for the memory CLI: a process that makes
 * one call or a few and exits. Node 20's global fetch loads undici on its first call, which costs a cold
 * process about 80 ms, half of a whole `memory list` (docs/benchmarks.md, "Start-up of the programs");
 * node:http is loaded already. No keep-alive (each call its own connection, closed after it), no redirects
 * and no compression: the API uses none of them. A failed connection rejects with Node's own error, whose
 * `code` (ECONNREFUSED…) the SDK reads as it reads fetch's cause.
 */
function header(res: IncomingMessage, name: string): string | null {
  const value = res.headers[name.toLowerCase()];
  return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
}

export const nodeFetch: Fetch = async (url, { method, headers, body, signal }) => {
  const target = new URL(url);
  const { request } = target.protocol === 'https:' ? await import('node:https') : await import('node:http');
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const req = request(target, { method, headers: body === undefined ? headers : { ...headers, 'Content-Length': String(Buffer.byteLength(body)) }, agent: false });
    const abort = () => req.destroy(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
    signal.addEventListener('abort', abort, { once: true });
    req.once('close', () => signal.removeEventListener('abort', abort));
    req.once('error', reject);
    req.once('response', (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      const text = new Promise<string>((done, fail) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.once('end', () => done(Buffer.concat(chunks).toString('utf8')));
        res.once('error', fail);
        // A body cut short (the socket destroyed by the deadline, say) fails the read, not the whole process.
        res.once('close', () => (res.complete ? undefined : fail(new Error('the answer was cut short'))));
      });
      text.catch(() => undefined);
      resolve({
        status,
        ok: status >= 200 && status < 300,
        headers: { get: (name) => header(res, name) },
        text: () => text,
      });
    });
    req.end(body);
  });
};
