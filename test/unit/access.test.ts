import { AppError } from '../../shared/domain/errors.js';
import { OPERATIONS } from '../../shared/api/operations.js';
import { scopeOf } from '../../shared/http/access.js';
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
    expect(() => scopeOf('PATCH', '/api/v1/record')).toThrow(/no operation is declared/);
  });

  test("each operation needs the scope decisions.md gives it: read to search, get, list, see usage and classify; write to create and update; delete to delete and forget", () => {
    const decided: Record<string, 'read' | 'write' | 'delete'> = {
      memory_recall: 'read',
      memory_get: 'read',
      memory_list: 'read',
      memory_usage: 'read',
      memory_classify: 'read',
      memory_classify_alias: 'read',
      memory_remember: 'write',
      memory_update: 'write',
      memory_delete: 'delete',
      memory_forget: 'delete',
      memory_forget_status: 'delete',
    };
    expect(Object.fromEntries(OPERATIONS.map((operation) => [operation.operationId, scopeOf(operation.method, operation.path)]))).toEqual(decided);
  });

  test('the local service answers every operation of the registry, each behind its scope, and serves them all in /openapi.json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'memory-access-'));
    const service = await startLocalService(loadConfig({ PORT: '0', MEMORY_DATA_DIR: dir, LOG_LEVEL: 'SILENT' }));
    try {
      const spec = (await (await fetch(`${service.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
      const documented = Object.entries(spec.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
      // And the health check, which has no key (docs/api.md, "Health").
      expect(documented.sort()).toEqual([...OPERATIONS.map((operation) => `${operation.method} ${operation.path}`), 'GET /healthz'].sort());
      // Without a key every operation is 401 (not 404 or 405): the gateway routes each one to a handler.
      for (const operation of OPERATIONS) {
        const answer = await fetch(`${service.url}${operation.path.replace(/\{\w+\}/g, 'x')}`, { method: operation.method });
        expect([operation.operationId, answer.status]).toEqual([operation.operationId, 401]);
      }
    } finally {
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
