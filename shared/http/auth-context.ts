import type { APIGatewayProxyEvent } from 'aws-lambda';
import { z } from 'zod';
import { AppError } from '../domain/errors.js';
import { scopesOf, type Principal } from '../domain/tenant.js';

/**
 * The authorizer context, as API Gateway passes it to the route handlers. API Gateway delivers every
 * value as a string, so the route side coerces them back.
 */
const authorizerContextSchema = z.object({
  tenantId: z.string().min(1),
  keyId: z.string().min(1),
  recordQuota: z.coerce.number().int().nonnegative(),
  queryQuota: z.coerce.number().int().nonnegative(),
  rate: z.coerce.number().positive(),
  burst: z.coerce.number().int().positive(),
  /** A comma list of the key's scopes. */
  scopes: z.string(),
  /** The agent the key is bound to; empty when it is bound to none. */
  agentId: z.string(),
  /** When the key ends (ISO 8601); empty when it does not. */
  expiresAt: z.string(),
});

/** The log message of an authorizer that failed (not one that refused a key); the stack counts these lines. */
export const AUTHORIZER_FAILURE_MESSAGE = 'authorizer failed';

export type AuthorizerContext = Record<string, string | number | boolean>;

/** Encodes a principal as the authorizer's `context` map. */
export function toAuthorizerContext(principal: Principal): AuthorizerContext {
  return {
    tenantId: principal.tenantId,
    keyId: principal.keyId,
    ...principal.limits,
    scopes: principal.scopes.join(','),
    agentId: principal.agentId ?? '',
    expiresAt: principal.expiresAt ?? '',
  };
}

/**
 * The principals decoded from frozen authorizer contexts, by context. A frozen context cannot change, so
 * its principal is decoded once: the local gateway hands the same frozen context to every request of a key
 * while its authorizer answer is cached, and a route decodes it twice (requireAccess in access.ts, then the handler).
 */
const decoded = new WeakMap<object, Principal>();

/**
 * The principal, unless its key has ended: a key expires at once, though API Gateway (or the local gateway)
 * may still hold the authorizer's Allow for it in its cache.
 */
function live(principal: Principal): Principal {
  if (principal.expiresAt !== null && Date.parse(principal.expiresAt) <= Date.now()) {
    throw new AppError('unauthorized', 'A valid API key is required');
  }
  return principal;
}

/** Decodes the authorizer context of a route event; throws 401 when it is missing, malformed or its key has ended. */
export function principalOf(event: Pick<APIGatewayProxyEvent, 'requestContext'>): Principal {
  const context: unknown = event.requestContext?.authorizer ?? undefined;
  const frozen = typeof context === 'object' && context !== null && Object.isFrozen(context);
  const known = frozen ? decoded.get(context) : undefined;
  if (known) return live(known);
  const parsed = authorizerContextSchema.safeParse(context);
  if (!parsed.success) throw new AppError('unauthorized', 'A valid API key is required');
  const { tenantId, keyId, scopes, agentId, expiresAt, ...limits } = parsed.data;
  const principal: Principal = Object.freeze({
    tenantId,
    keyId,
    limits: Object.freeze(limits),
    scopes: Object.freeze(scopesOf(scopes)),
    agentId: agentId === '' ? null : agentId,
    expiresAt: expiresAt === '' ? null : expiresAt,
  });
  if (frozen) decoded.set(context, principal);
  return live(principal);
}
