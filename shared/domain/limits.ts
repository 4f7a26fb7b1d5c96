/**
 * The service's limits from decisions.md, declared once: validation, the OpenAPI document, the MCP tools and
 * the CLI's messages all read them here. Characters are Unicode code points; bytes are UTF-8.
 */
export const LIMITS = {
  agentIdChars: 256,
  clientChars: 256,
  titleChars: 2048,
  bodyBytes: 65536,
  metadataBytes: 16384,
  /** Levels of nesting in `metadata`, the object itself being level 1 (json-value.ts says why). */
  metadataDepth: 32,
  /** A record id a caller names (a forget's `ids`, MCP's memory_get, a listing cursor): longer is never one. */
  recordIdChars: 64,
  /** Records one write may supersede. */
  supersedesMax: 20,
  idempotencyKeyChars: 255,
  requestBytes: 1024 * 1024,
  /** Characters of a request's URL (path and query string): API Gateway's limit for a regional REST API. */
  urlChars: 10240,
  searchLimitMin: 1,
  searchLimitMax: 100,
  searchLimitDefault: 20,
  /** How long a search may take before it fails with 503 search_timeout, unless configured otherwise. */
  searchTimeoutMs: 5_000,
} as const;

/** The range of a search's or a listing's `limit` in words ("1 to 100"), as every message about it says it. */
export const SEARCH_LIMIT_RANGE = `${LIMITS.searchLimitMin} to ${LIMITS.searchLimitMax}`;
