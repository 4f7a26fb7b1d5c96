/**
 * The context the authorizer hands the route handlers, as API Gateway passes it (every value a string): a
 * key of tenant `t` with the smallest limits, no agent and no end, changed by `fields`. Frozen, as the
 * gateways cache and share it.
 */
export function authorizerContext(fields: Record<string, string> = {}): Readonly<Record<string, string>> {
  return Object.freeze({
    tenantId: 't',
    keyId: 'key_0000000000000001',
    recordQuota: '1',
    queryQuota: '1',
    rate: '1',
    burst: '1',
    scopes: 'read,write,delete',
    agentId: '',
    expiresAt: '',
    ...fields,
  });
}
