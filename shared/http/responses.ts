import type { APIGatewayProxyResult } from 'aws-lambda';
import { AppError, errorBody } from '../domain/errors.js';

const JSON_TYPE = { 'Content-Type': 'application/json' } as const;

/** A JSON response with `Content-Type: application/json`. */
export function jsonResult(statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return { statusCode, headers: { ...JSON_TYPE, ...headers }, body: JSON.stringify(body) };
}

/** The response for an AppError, with `Retry-After` on 429s. */
export function errorResult(err: AppError): APIGatewayProxyResult {
  const body = errorBody(err);
  const headers: Record<string, string> = body.retry_after === undefined ? {} : { 'Retry-After': String(body.retry_after) };
  return jsonResult(err.status, body, headers);
}

/** The 500 response: a fixed message and the request id, never internal details. */
export function internalErrorResult(requestId: string): APIGatewayProxyResult {
  return jsonResult(500, {
    error: 'internal_error',
    message: 'An internal error occurred. Quote the request_id when you report it.',
    request_id: requestId,
  });
}

/** Reads a request header case-insensitively, as HTTP header names are. */
export function headerValue(headers: Record<string, string | undefined> | null | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const wanted = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === wanted) return v;
  return undefined;
}
