import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { bearerToken, gatewayKeyValue, hashApiKey } from '../../shared/domain/api-key.js';
import { expired, type ApiKeyInfo, type Principal } from '../../shared/domain/tenant.js';
import { AUTHORIZER_FAILURE_MESSAGE, toAuthorizerContext } from '../../shared/http/auth-context.js';
import { headerValue } from '../../shared/http/responses.js';
import type { KeyStore } from '../../shared/ports.js';

export interface AuthorizerDeps {
  keys: Pick<KeyStore, 'findByHash' | 'markUsed'>;
  logger: Logger;
  now?: () => Date;
}

/**
 * The resource the policy allows: every method and path of the stage, so that a cached policy serves
 * every route (API Gateway caches one policy per Authorization header, whatever the route).
 */
function stageWildcard(methodArn: string): string {
  const [arnPrefix, apiId, stage] = methodArn.split('/');
  return `${arnPrefix}/${apiId}/${stage}/*`;
}

/**
 * Records the day a key is used on, when its stored day is older: at most one write per key a day (fewer,
 * since API Gateway caches the authorizer's answer). A failure is logged and does not refuse the key.
 */
async function noteUse(keys: Pick<KeyStore, 'markUsed'>, key: ApiKeyInfo, at: Date, logger: Logger): Promise<void> {
  const day = at.toISOString().slice(0, 10);
  if (key.last_used_on !== null && key.last_used_on >= day) return;
  try {
    await keys.markUsed(key, day);
  } catch (error) {
    logger.warn('could not record the day a key was used', { key_id: key.key_id, error: error as Error });
  }
}

/**
 * The REQUEST authorizer: maps `Authorization: Bearer <key>` to the key's tenant, limits, scopes and agent.
 * An unknown, revoked, expired or malformed key throws `Unauthorized`, which API Gateway answers with 401
 * (API Gateway caches an Allow for 30 s, so on AWS a key stops within 30 s of its end).
 */
export function createAuthorizerHandler({ keys, logger, now = () => new Date() }: AuthorizerDeps) {
  return middy<APIGatewayRequestAuthorizerEvent, APIGatewayAuthorizerResult>()
    .use(injectLambdaContext(logger))
    .handler(async (event) => {
      const token = bearerToken(headerValue(event.headers, 'authorization'));
      let found;
      try {
        found = token === null ? null : await keys.findByHash(hashApiKey(token));
      } catch (error) {
        // A real failure, as opposed to a refused key: logged as the one line the AuthorizerFailures metric
        // filter counts (every refused key also throws, so Lambda's Errors metric cannot tell them apart).
        logger.error(AUTHORIZER_FAILURE_MESSAGE, { error: error as Error });
        throw error;
      }
      // A revoked key and one whose end has come are refused alike.
      if (!found || found.key.status !== 'active' || expired(found.key, now())) throw new Error('Unauthorized');
      const { key, tenant } = found;
      await noteUse(keys, key, now(), logger);
      const principal: Principal = {
        tenantId: tenant.tenant_id,
        keyId: key.key_id,
        limits: { ...tenant.limits, rate: key.rate ?? tenant.limits.rate, burst: key.burst ?? tenant.limits.burst },
        scopes: key.scopes,
        agentId: key.agent_id,
        expiresAt: key.expires_at,
      };
      return {
        principalId: tenant.tenant_id,
        policyDocument: {
          Version: '2012-10-17',
          Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: stageWildcard(event.methodArn) }],
        },
        context: toAuthorizerContext(principal),
        usageIdentifierKey: gatewayKeyValue(key.key_id),
      };
    });
}
