import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { z } from 'zod';
import { AppError } from '../domain/errors.js';
import type { Principal } from '../domain/tenant.js';

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
});

/** The log message of an authorizer that failed (not one that refused a key); the stack counts these lines. */
export const AUTHORIZER_FAILURE_MESSAGE = 'authorizer failed';

export type AuthorizerContext = Record<string, string | number | boolean>;

/** Encodes a principal as the authorizer's `context` map. */
export function toAuthorizerContext(principal: Principal): AuthorizerContext {
  return { tenantId: principal.tenantId, keyId: principal.keyId, ...principal.limits };
}

/**
 * The principals decoded from frozen authorizer contexts, by context. A frozen context cannot change, so
 * its principal is decoded once: the local gateway hands the same frozen context to every request of a key
 * while its authorizer answer is cached, and a route decodes it twice (requirePrincipal, then the handler).
 */
const decoded = new WeakMap<object, Principal>();

/** Decodes the authorizer context of a route event; throws 401 when it is missing or malformed. */
export function principalOf(event: Pick<APIGatewayProxyEvent, 'requestContext'>): Principal {
  const context: unknown = event.requestContext?.authorizer ?? undefined;
  const frozen = typeof context === 'object' && context !== null && Object.isFrozen(context);
  const known = frozen ? decoded.get(context) : undefined;
  if (known) return known;
  const parsed = authorizerContextSchema.safeParse(context);
  if (!parsed.success) throw new AppError('unauthorized', 'A valid API key is required');
  const { tenantId, keyId, ...limits } = parsed.data;
  const principal: Principal = Object.freeze({ tenantId, keyId, limits: Object.freeze(limits) });
  if (frozen) decoded.set(context, principal);
  return principal;
}

/**
 * Refuses, before any other check, an event that carries no valid authorizer context. API Gateway (or the
 * local gateway) has already authenticated the caller; this keeps a handler safe if it is ever invoked
 * without one.
 */
export function requirePrincipal(): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return {
    before: async (request) => {
      principalOf(request.event);
    },
  };
}
