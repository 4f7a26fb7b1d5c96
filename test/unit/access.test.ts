import { AppError } from '../../shared/domain/errors.js';
import { ROUTE_SCOPES, scopeOf } from '../../shared/http/access.js';
import { principalOf } from '../../shared/http/auth-context.js';
import { loadConfig } from '../../local/config.js';
import { startLocalService } from '../../local/app.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authorizerContext } from '../support/authorizer-context.js';

const context = (fields: Record<string, string>) => authorizerContext({ scopes: 'read', ...fields });

describe('access', () => {
  test('a context whose key has ended is 401, though the gateway still holds it (a frozen, cached context)', () => {
    const ended = context({ expiresAt: new Date(Date.now() - 1).toISOString() });
    expect(() => principalOf({ requestContext: { authorizer: ended } } as never)).toThrow(AppError);
    const open = context({ expiresAt: new Date(Date.now() + 60_000).toISOString() });
    expect(principalOf({ requestContext: { authorizer: open } } as never)).toMatchObject({ scopes: ['read'], agentId: null });
  });

  test('HEAD needs what GET needs; a route without a scope is a bug, not an open door', () => {
    expect(scopeOf('HEAD', '/api/v1/record/{id}')).toBe('read');
    expect(() => scopeOf('PATCH', '/api/v1/record')).toThrow(/no scope/);
  });

  test('every route the service answers with a key has its scope', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'memory-access-'));
    const service = await startLocalService(loadConfig({ PORT: '0', MEMORY_DATA_DIR: dir, LOG_LEVEL: 'SILENT' }));
    try {
      const spec = (await (await fetch(`${service.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
      const operations = Object.entries(spec.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
      expect(operations.sort()).toEqual(Object.keys(ROUTE_SCOPES).sort());
    } finally {
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
