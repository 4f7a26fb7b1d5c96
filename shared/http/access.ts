import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { operationAt } from '../api/operations.js';
import { AppError } from '../domain/errors.js';
import type { Principal, Scope } from '../domain/tenant.js';
import { principalOf } from './auth-context.js';

/**
 * The scope a route needs (decisions.md, "Keys with scopes"), as the operations registry declares it, by the
 * route's method and resource (`/api/v1/record/{id}`, as API Gateway and the local gateway name it); HEAD is
 * GET without the body. Throws for a route that is not declared (a bug, never a caller's error).
 */
export function scopeOf(method: string, resource: string): Scope {
  const operation = operationAt(method, resource);
  if (operation === undefined) throw new Error(`no operation is declared for ${method} ${resource} (shared/api/operations.ts)`);
  return operation.scope;
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

/**
 * Whether the key may change the tenant's record with this id (update or delete it). A key bound to no agent
 * may try any id, and the store answers for it; a key bound to an agent only its agent's records, read first
 * with `get`: another agent's is as unknown to it as another tenant's. A record's agent never changes, so the
 * read cannot race with the change that follows it.
 */
export async function mayChange(
  principal: Principal,
  id: string,
  get: (tenantId: string, id: string) => Promise<{ agent_id: string } | null>,
): Promise<boolean> {
  if (principal.agentId === null) return true;
  const record = await get(principal.tenantId, id);
  return record !== null && mayRead(principal, record);
}

/** Whether the key may see this record: always, unless it is bound to another agent than the record's. */
export function mayRead(principal: Principal, record: { agent_id: string }): boolean {
  return principal.agentId === null || record.agent_id === principal.agentId;
}
