import { malformedTextProblem } from './text.js';

/** Why a parsed JSON value cannot be stored as sent: a message that reads after the field's name, and where. */
export interface JsonProblem {
  /** For a person, e.g. `is nested deeper than 32 levels (at /a/b)`. */
  message: string;
  /** The offending value's place, as a JSON Pointer (RFC 6901); `""` is the value itself. */
  pointer: string;
}

/** One value still to look at, with the way back to the root for the pointer. */
interface Frame {
  value: unknown;
  /** Containers (objects and arrays) around this value. */
  depth: number;
  parent: Frame | null;
  key: string | number | null;
}

/** A pointer segment kept short enough for a message, with RFC 6901's escapes and no unpaired surrogate. */
function segment(key: string | number): string {
  const text = String(key).toWellFormed();
  const short = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  return short.replace(/~/g, '~0').replace(/\//g, '~1');
}

function pointerOf(frame: Frame): string {
  const parts: string[] = [];
  for (let f: Frame | null = frame; f !== null && f.key !== null; f = f.parent) parts.push(segment(f.key));
  return parts.length === 0 ? '' : `/${parts.reverse().join('/')}`;
}

function problem(frame: Frame, what: string): JsonProblem {
  const pointer = pointerOf(frame);
  return { message: pointer === '' ? what : `${what} (at ${pointer})`, pointer };
}

const isPlainObject = (v: object) => {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

/**
 * Checks that a parsed JSON value will come back exactly as it was sent through every store and every
 * serialization it meets (SQLite, DynamoDB, OpenSearch, structured clone between threads, the HTTP
 * answer), and returns the first problem in document order, or null:
 * - objects and arrays nest at most `maxDepth` levels, the value itself being level 1: every
 *   serializer in the path recurses (JSON.stringify overflows the stack at a few thousand levels,
 *   structured clone at about a thousand), and nothing a caller means by metadata needs more;
 * - strings and keys are well-formed Unicode (UTF-8 storage cannot hold an unpaired surrogate);
 * - numbers are finite: a JSON number beyond the double range, such as 1e400, parses as Infinity and
 *   would come back as null;
 * - no key is `__proto__`, which JavaScript parsers and objects treat as the prototype, so it would not
 *   come back (zod's own copy drops it).
 * The walk uses a stack of its own rather than recursion, so no input, however deep, can exhaust the
 * call stack here; it visits each value at most once.
 */
export function jsonValueProblem(value: unknown, maxDepth: number): JsonProblem | null {
  const stack: Frame[] = [{ value, depth: 0, parent: null, key: null }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (typeof frame.key === 'string') {
      if (frame.key === '__proto__') return problem(frame, 'has the key "__proto__", which JavaScript reads as the object\'s prototype');
      const malformed = malformedTextProblem(frame.key);
      if (malformed !== null) return problem(frame, `has a key that ${malformed}`);
    }
    const v = frame.value;
    if (typeof v === 'string') {
      const malformed = malformedTextProblem(v);
      if (malformed !== null) return problem(frame, `has a string that ${malformed}`);
      continue;
    }
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return problem(frame, 'has a number outside the range of a double (IEEE 754), such as 1e400');
      continue;
    }
    if (v === null || typeof v === 'boolean') continue;
    if (typeof v !== 'object' || !(Array.isArray(v) || isPlainObject(v))) return problem(frame, 'has a value that is not JSON');
    const depth = frame.depth + 1;
    if (depth > maxDepth) return problem(frame, `is nested deeper than ${maxDepth} levels`);
    // Children go on the stack last first, so the first problem found is the first in the document.
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], depth, parent: frame, key: i });
      continue;
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      stack.push({ value: (v as Record<string, unknown>)[key], depth, parent: frame, key });
    }
  }
  return null;
}
