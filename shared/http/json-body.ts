import type { APIGatewayProxyEvent } from 'aws-lambda';
import { AppError } from '../domain/errors.js';
import { LIMITS } from '../domain/record.js';
import { headerValue } from './responses.js';

/** `application/json`, or any `application/*+json`, with optional parameters such as charset. */
function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  return mediaType === 'application/json' || /^application\/[\w.+-]+\+json$/.test(mediaType);
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The body's bytes, from text or from base64 (as API Gateway passes a body it treats as binary). */
function bodyBytes(event: APIGatewayProxyEvent): Buffer {
  if (!event.body) return Buffer.alloc(0);
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
}

/**
 * Reads a request's JSON body: refuses a body over 1 MiB (413 `payload_too_large`), requires a JSON
 * Content-Type (415 `unsupported_media_type`) and a body that is UTF-8 (RFC 8259 requires it) holding a
 * JSON object (400 `invalid_json`). Bytes that are not UTF-8 are refused rather than read with replacement
 * characters, which would store text the caller never sent. The local gateway refuses big bodies before
 * they are read; on AWS, API Gateway lets up to 10 MB through, so this is where the 1 MiB limit holds.
 */
export function readJsonBody(event: APIGatewayProxyEvent): Record<string, unknown> {
  const bytes = bodyBytes(event);
  if (bytes.length > LIMITS.requestBytes) {
    throw new AppError('payload_too_large', `The request body is larger than ${LIMITS.requestBytes} bytes`);
  }
  if (!isJson(headerValue(event.headers, 'content-type'))) {
    throw new AppError('unsupported_media_type', 'Content-Type must be application/json');
  }
  let raw: string;
  try {
    raw = utf8.decode(bytes);
  } catch {
    throw new AppError('invalid_json', 'The request body is not valid UTF-8');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new AppError('invalid_json', 'The request body is not valid JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new AppError('invalid_json', 'The request body must be a JSON object');
  }
  return parsed as Record<string, unknown>;
}
