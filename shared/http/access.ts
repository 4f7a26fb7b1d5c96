import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { AppError } from '../domain/errors.js';
import type { Principal, Scope } from '../domain/tenant.js';
import { principalOf } from './auth-context.js';

/**
 * The scope each operation needs (decisions.md, "Keys with scopes"): `read` for search, get, list, usage and
 * classify; `write` to create records; `delete` to delete and forget (and to follow a forget job). The one
 * place scopes are checked: every API route's middleware chain (api-route.ts) asks it, by the route's
 * method and resource (`/api/v1/record/{id}`), as API Gateway and the local gateway name them.
 */
export const ROUTE_SCOPES = {
  'POST /api/v1/record': 'write',
  'GET /api/v1/record': 'read',
  'GET /api/v1/record/{id}': 'read',
  'DELETE /api/v1/record/{id}': 'delete',
  'POST /api/v1/forget': 'delete',
  'GET /api/v1/forget/{job_id}': 'delete',
  'GET /api/v1/query': 'read',
  'GET /api/v1/usage': 'read',
  'POST /v1/classify': 'read',
  'POST /api/v1/classify': 'read',
} as const satisfies Record<string, Scope>;

/** The scope a route needs; HEAD is GET without the body. Throws for a route that is not listed (a bug, never a caller's error). */
export function scopeOf(method: string, resource: string): Scope {
  const key = `${method === 'HEAD' ? 'GET' : method} ${resource}`;
  const scope = (ROUTE_SCOPES as Record<string, Scope>)[key];
  if (scope === undefined) throw new Error(`no scope is set for ${key} (shared/http/access.ts)`);
  return scope;
}

/**
 * Refuses, before anything else, a request without a valid authorizer context (401) or whose key lacks
 * the route's scope (403 `forbidden`, naming the scope).
 */
export function requireAccess(): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return {
    before: async ({ event }) => {
      const principal = principalOf(event);
      const scope = scopeOf(event.httpMethod, event.resource);
      if (!principal.scopes.includes(scope)) {
        throw new AppError('forbidden', `This key lacks the ${scope} scope, which ${event.httpMethod} ${event.resource} needs`);
      }
    },
  };
}

/**
 * The agent a request acts for. A key bound to an agent acts for that agent only: a request that names no
 * agent is one for it, and one that names another agent is 403 `forbidden`. A key bound to none acts for
 * the agent the request names, if any.
 */
export function agentFor(principal: Principal, named: string | null | undefined): string | undefined {
  if (principal.agentId === null) return named ?? undefined;
  if (named !== undefined && named !== null && named !== principal.agentId) {
    throw new AppError('forbidden', `This key is bound to agent "${principal.agentId}" and may not act for agent "${named}"`);
  }
  return principal.agentId;
}

/** Whether the key may see this record: always, unless it is bound to another agent than the record's. */
export function mayRead(principal: Principal, record: { agent_id: string }): boolean {
  return principal.agentId === null || record.agent_id === principal.agentId;
}
