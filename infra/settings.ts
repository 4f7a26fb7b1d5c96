/**
 * How long API Gateway reuses an authorizer answer for one `Authorization` header. It is also the longest
 * a revoked key keeps working on AWS. 30 s keeps the authorizer (a Lambda call and three strongly
 * consistent DynamoDB reads) to at most two runs a minute per busy key, while a revocation still applies
 * within half a minute. The local gateway uses MEMORY_AUTH_CACHE_SECONDS (2 s) instead.
 */
export const AUTHORIZER_CACHE_TTL_SECONDS = 30;
