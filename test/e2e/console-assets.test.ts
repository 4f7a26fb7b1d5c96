/**
 * How the local server serves the console at /console/: without a key (the page holds no data), with a
 * Content-Security-Policy that allows no inline script and connections to this origin only, and nothing but
 * the console's own files.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { startTestService, type TestService } from '../support/local-service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

test('the page, its script and its styles are served without a key, with the security headers', async () => {
  for (const [path, type] of [
    ['/console/', 'text/html; charset=utf-8'],
    ['/console/index.html', 'text/html; charset=utf-8'],
    ['/console/console.js', 'text/javascript; charset=utf-8'],
    ['/console/console.css', 'text/css; charset=utf-8'],
  ] as const) {
    const response = await fetch(`${svc.url}${path}`);
    expect({ path, status: response.status, type: response.headers.get('content-type') }).toEqual({ path, status: 200, type });
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
  }
  const html = await (await fetch(`${svc.url}/console/`)).text();
  expect(html).toContain('<script type="module" src="console.js"></script>');
  // No inline script: every <script> has a src and no content.
  expect(html.match(/<script[^>]*>[^<]+<\/script>/g)).toBeNull();
});

test('/console redirects to /console/, so the relative links of the page resolve', async () => {
  const response = await fetch(`${svc.url}/console`, { redirect: 'manual' });
  expect(response.status).toBe(308);
  expect(response.headers.get('location')).toBe('/console/');
});

test('nothing else is served: other names, other folders and escapes answer a JSON 404 (401 without a key where no console route has the path); writes answer 405', async () => {
  // A name in /console/ is the console's to refuse, key or none; a path no route has is 404 only to a valid
  // key, since authentication comes first (docs/api.md, "Order of checks").
  const paths = { '/console/secret.txt': 404, '/console/..%2Fpackage.json': 404, '/console/__proto__': 404, '/console/src/main.ts': 401, '/console/%2e%2e/package.json': 401 };
  for (const [path, withoutKey] of Object.entries(paths)) {
    for (const [headers, status] of [[{}, withoutKey], [{ authorization: `Bearer ${svc.tenant.api_key}` }, 404]] as const) {
      const response = await fetch(`${svc.url}${path}`, { headers });
      expect({ path, status: response.status }).toEqual({ path, status });
      expect(((await response.json()) as { error: string }).error).toBe(status === 404 ? 'not_found' : 'unauthorized');
    }
  }
  const post = await fetch(`${svc.url}/console/`, { method: 'POST', body: '{}' });
  expect(post.status).toBe(405);
  expect(post.headers.get('allow')).toBe('GET, HEAD');
});

test('HEAD answers as GET does, without the body', async () => {
  const response = await fetch(`${svc.url}/console/console.js`, { method: 'HEAD' });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  expect(await response.text()).toBe('');
});
