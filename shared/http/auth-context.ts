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

/** Decodes the authorizer context of a route event; throws 401 when it is missing or malformed. */
export function principalOf(event: Pick<APIGatewayProxyEvent, 'requestContext'>): Principal {
  const parsed = authorizerContextSchema.safeParse(event.requestContext?.authorizer ?? undefined);
  if (!parsed.success) throw new AppError('unauthorized', 'A valid API key is required');
  const { tenantId, keyId, ...limits } = parsed.data;
  return { tenantId, keyId, limits };
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
