const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/i;

function isCalendarDate(date: string): boolean {
  const m = DATE.exec(date);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = new Date(Date.UTC(y, mo - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
}

/**
 * Reads a `since` value: `YYYY-MM-DD` (00:00 UTC that day) or an ISO 8601 date-time (UTC when it has no
 * offset). Returns the instant as an ISO string with milliseconds in UTC, or null when it is neither.
 */
export function parseSince(value: string): string | null {
  if (DATE.test(value)) return isCalendarDate(value) ? `${value}T00:00:00.000Z` : null;
  const m = DATE_TIME.exec(value);
  if (!m || !isCalendarDate(m[1]!)) return null;
  if (Number(m[2]) > 23 || Number(m[3]) > 59 || Number(m[4] ?? 0) > 59) return null;
  const offset = m[6] === undefined ? 'Z' : m[6].toUpperCase();
  const normalised = `${m[1]}T${m[2]}:${m[3]}:${m[4] ?? '00'}.${(m[5] ?? '0').padEnd(3, '0').slice(0, 3)}${
    offset === 'Z' ? 'Z' : offset.replace(/^([+-]\d{2}):?(\d{2})$/, '$1:$2')
  }`;
  const t = Date.parse(normalised);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}
