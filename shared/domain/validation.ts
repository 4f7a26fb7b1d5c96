import type { z } from 'zod';
import { AppError, type ErrorCode } from './errors.js';
import { SEARCH_LIMIT_RANGE } from './limits.js';
import { RECORD_TYPES } from './record-schema.js';
import {
  classifyInputSchema,
  FORGET_SELECTORS,
  forgetInputSchema,
  listParamsSchema,
  PATCH_FIELDS,
  recordInputSchema,
  recordPatchSchema,
  searchParamsSchema,
  usageQuerySchema,
  type ForgetInput,
  type ListParams,
  type RecordPatch,
  type SearchParams,
  type UsageQuery,
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
  min_rank: 'invalid_min_rank',
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
  if (named === 'invalid_limit') return new AppError('invalid_limit', `limit must be an integer from ${SEARCH_LIMIT_RANGE}`);
  if (named === 'invalid_since') {
    return new AppError('invalid_since', `since must be ${DATE_FORMS}`);
  }
  if (named === 'invalid_min_rank') return new AppError('invalid_min_rank', 'min_rank must be a number from 0 to 1');
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

type ObjectSchema = z.ZodType & { shape: Record<string, z.ZodType> };

/**
 * A parser for `schema` that returns the output, or throws the one AppError that describes the first problem:
 * unknown fields first, then the fields in the schema's order; within a field, a missing value before anything
 * else. The fields a value must be given for (`missing_field`) are those whose schema refuses `undefined`.
 */
function parserOf<S extends ObjectSchema>(schema: S): (input: unknown) => z.output<S> {
  const fieldOrder = Object.keys(schema.shape);
  const required = new Set(fieldOrder.filter((field) => !schema.shape[field]!.safeParse(undefined).success));
  const order = (issue: Issue) => (issue.code === 'unrecognized_keys' ? -1 : fieldOrder.indexOf(String(issue.path[0] ?? '')));
  return (input) => {
    const result = schema.safeParse(input, { reportInput: true });
    if (result.success) return result.data;
    const first = [...result.error.issues].sort(
      (a, b) => order(a) - order(b) || Number(!isMissing(a)) - Number(!isMissing(b)),
    )[0]!;
    throw classify(first, required);
  };
}

/** Validates the body of a write; throws AppError(missing_field | invalid_field | invalid_type | body_too_large). */
export const parseRecordInput = parserOf(recordInputSchema);

const parsePatchFields = parserOf(recordPatchSchema);

/**
 * Validates the body of a PATCH; throws AppError(missing_field) when it names no field to change, and
 * invalid_field for any other field (agent_id included: a record's agent never changes).
 */
export function parseRecordPatch(input: unknown): RecordPatch {
  const patch = parsePatchFields(input);
  if (PATCH_FIELDS.every((field) => patch[field] === undefined)) {
    throw new AppError('missing_field', `at least one of ${PATCH_FIELDS.join(', ')} is required`);
  }
  return patch;
}

/** Validates the body of a classify request. */
export const parseClassifyInput = parserOf(classifyInputSchema);

/** Validates the query of `GET /api/v1/usage`; throws AppError(invalid_field). */
export const parseUsageQuery: (params: Record<string, string | undefined>) => UsageQuery = parserOf(usageQuerySchema);

/** Validates the query string of a search; throws AppError(invalid_limit | invalid_since | invalid_until | invalid_type | invalid_field). */
export const parseSearchParams: (params: Record<string, string | undefined>) => SearchParams = parserOf(searchParamsSchema);

/** Validates the query string of a listing; throws AppError(invalid_limit | invalid_since | invalid_until | invalid_type | invalid_field). */
export const parseListParams: (params: Record<string, string | undefined>) => ListParams = parserOf(listParamsSchema);

const parseForgetFields = parserOf(forgetInputSchema);

/**
 * Validates the body of a forget; throws AppError(missing_field) when it names no selector, since erasing a
 * whole tenant is never one request's job.
 */
export function parseForgetInput(input: unknown): ForgetInput {
  const forget = parseForgetFields(input);
  if (FORGET_SELECTORS.every((selector) => forget[selector] === undefined)) {
    throw new AppError(
      'missing_field',
      `at least one of ${FORGET_SELECTORS.join(', ')} is required (erasing a whole tenant is the operator's tenant delete)`,
    );
  }
  return forget;
}
