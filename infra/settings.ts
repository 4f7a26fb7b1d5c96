/**
 * How long API Gateway reuses an authorizer answer for one `Authorization` header. It is also the longest
 * a revoked key keeps working on AWS. 30 s keeps the authorizer (a Lambda call and three strongly
 * consistent DynamoDB reads) to at most two runs a minute per busy key, while a revocation still applies
 * within half a minute. The local gateway uses MEMORY_AUTH_CACHE_SECONDS (2 s) instead.
 */
export const AUTHORIZER_CACHE_TTL_SECONDS = 30;

/**
 * How long the classification worker waits for Bedrock per record before the linear model answers, when
 * the stack is deployed with `-c bedrockModelId=…`. The worker classifies the ten messages of a batch in
 * parallel, so a batch waits about this long at worst, well inside its 30 s timeout (and the queue hides a
 * message for six times that). A call is short (at most about 1 650 input and 150 output tokens), so
 * 3 s leaves room for a slow answer or one retry after a throttle.
 */
export const BEDROCK_TIMEOUT_MS = 3_000;
