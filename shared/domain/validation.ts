import type { z } from 'zod';
import { AppError, type ErrorCode } from './errors.js';
import { RECORD_TYPES } from './record.js';
import {
  classifyInputSchema,
  FORGET_SELECTORS,
  forgetInputSchema,
  listParamsSchema,
  recordInputSchema,
  searchParamsSchema,
  type ForgetInput,
  type ListParams,
  type SearchParams,
} from './schemas.js';
import { DATE_FORMS } from './since.js';
import { isBlank } from './text.js';

type Issue = z.core.$ZodIssue;

/** The error code a field's problems answer with when no refinement named a more specific one. */
const FIELD_CODES: Record<string, ErrorCode> = {
  type: 'invalid_type',
  limit: 'invalid_limit',
  since: 'invalid_since',
  until: 'invalid_until',
};

const TYPE_MESSAGE = `type must be one of: ${RECORD_TYPES.join(', ')}`;

/** A required field that is absent, null, or an empty or blank string is missing, whatever its schema. */
function isMissing(issue: Issue): boolean {
  const input = issue.input;
  return issue.path.length === 1 && (input === undefined || input === null || (typeof input === 'string' && isBlank(input)));
}

function classify(issue: Issue, required: ReadonlySet<string>): AppError {
  if (issue.code === 'unrecognized_keys') {
    return new AppError('invalid_field', `unknown field: ${issue.keys.join(', ')}`);
  }
  const field = String(issue.path[0] ?? 'body');
  if (isMissing(issue) && required.has(field)) {
    return new AppError('missing_field', `${field} is required and must be a non-blank string`);
  }
  const named = (issue.code === 'custom' ? (issue.params?.code as ErrorCode | undefined) : undefined) ?? FIELD_CODES[field];
  if (named === 'invalid_type') return new AppError('invalid_type', TYPE_MESSAGE);
  if (named === 'invalid_limit') return new AppError('invalid_limit', 'limit must be an integer from 1 to 100');
  if (named === 'invalid_since') {
    return new AppError('invalid_since', `since must be ${DATE_FORMS}`);
  }
  if (named === 'invalid_until') {
    return new AppError('invalid_until', `until must be ${DATE_FORMS}`);
  }
  if (named === 'body_too_large') return new AppError('body_too_large', `${field} ${issue.message}`);
  if (issue.code === 'invalid_type') {
    const expected = issue.expected === 'record' ? 'JSON object' : issue.expected;
    return new AppError('invalid_field', `${field} must be ${/^[aeiou]/.test(expected) ? 'an' : 'a'} ${expected}`);
  }
  return new AppError('invalid_field', `${field} ${issue.message}`);
}

/**
 * Parses `input` with `schema` and returns the output, or throws the one AppError that describes the first
 * problem: unknown fields first, then the fields in schema order; within a field, a missing value before
 * anything else.
 */
function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, fieldOrder: string[], required: string[]): z.output<S> {
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  const order = (issue: Issue) =>
    issue.code === 'unrecognized_keys' ? -1 : fieldOrder.indexOf(String(issue.path[0] ?? ''));
  const requiredSet = new Set(required);
  const first = [...result.error.issues].sort(
    (a, b) => order(a) - order(b) || Number(!isMissing(a)) - Number(!isMissing(b)),
  )[0]!;
  throw classify(first, requiredSet);
}

const RECORD_FIELDS = ['agent_id', 'type', 'title', 'body', 'client', 'metadata'];
const RECORD_REQUIRED = ['agent_id', 'type', 'title', 'body'];

/** Validates the body of a write; throws AppError(missing_field | invalid_field | invalid_type | body_too_large). */
export function parseRecordInput(input: unknown) {
  return parseOrThrow(recordInputSchema, input, RECORD_FIELDS, RECORD_REQUIRED);
}

/** Validates the body of a classify request. */
export function parseClassifyInput(input: unknown) {
  return parseOrThrow(classifyInputSchema, input, ['title', 'body'], ['title', 'body']);
}

/** Validates the query string of a search; throws AppError(invalid_limit | invalid_since | invalid_type | invalid_field). */
export function parseSearchParams(params: Record<string, string | undefined>): SearchParams {
  return parseOrThrow(searchParamsSchema, params, ['q', 'agent_id', 'type', 'client', 'limit', 'since'], []);
}

/** Validates the query string of a listing; throws AppError(invalid_limit | invalid_since | invalid_until | invalid_type | invalid_field). */
export function parseListParams(params: Record<string, string | undefined>): ListParams {
  return parseOrThrow(listParamsSchema, params, ['agent_id', 'type', 'client', 'since', 'until', 'order', 'limit', 'cursor'], []);
}

/**
 * Validates the body of a forget; throws AppError(missing_field) when it names no selector, since erasing a
 * whole tenant is never one request's job.
 */
export function parseForgetInput(input: unknown): ForgetInput {
  const forget = parseOrThrow(forgetInputSchema, input, [...FORGET_SELECTORS, 'dry_run'], []);
  if (FORGET_SELECTORS.every((selector) => forget[selector] === undefined)) {
    throw new AppError(
      'missing_field',
      `at least one of ${FORGET_SELECTORS.join(', ')} is required (erasing a whole tenant is the operator's tenant delete)`,
    );
  }
  return forget;
}
