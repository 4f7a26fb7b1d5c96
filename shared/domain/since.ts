const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
// The offset's sign may be a space: a `+` written into a URL's query unencoded reaches the service as one
// (`since=2026-01-05T10:20+02:00`), and a space can mean nothing else there. ISO 8601's offsets of hours alone
// (`+02`) are read too.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:Z|([+ -])(\d{2})(?::?(\d{2}))?)?$/i;

/** The earliest instant a date may name: 0001-01-01T00:00:00.000Z. */
export const EARLIEST_INSTANT = '0001-01-01T00:00:00.000Z';
/** The latest instant a date may name: 9999-12-31T23:59:59.999Z. */
export const LATEST_INSTANT = '9999-12-31T23:59:59.999Z';

// Outside these, toISOString writes a six-digit year with a sign, which sorts before every four-digit one.
const EARLIEST_MS = Date.parse(EARLIEST_INSTANT);
const LATEST_MS = Date.parse(LATEST_INSTANT);

/** The epoch milliseconds of a UTC calendar time, or null when the day is not in the calendar. */
function utcMillis(year: number, month: number, day: number, hours = 0, minutes = 0, seconds = 0, ms = 0): number | null {
  // setUTCFullYear takes the year as written, where Date.UTC reads 0 to 99 as 1900 to 1999.
  const t = new Date(0);
  t.setUTCFullYear(year, month - 1, day);
  if (t.getUTCFullYear() !== year || t.getUTCMonth() !== month - 1 || t.getUTCDate() !== day) return null;
  t.setUTCHours(hours, minutes, seconds, ms);
  return t.getTime();
}

/**
 * Reads a `since` value: `YYYY-MM-DD` (00:00 UTC that day) or an ISO 8601 date-time (UTC when it has no
 * offset). Returns the instant as an ISO string with milliseconds in UTC, or null when it is neither, or
 * when the instant is outside EARLIEST_INSTANT … LATEST_INSTANT (an offset can push a date in range out).
 */
export function parseSince(value: string): string | null {
  let ms: number | null;
  const date = DATE.exec(value);
  if (date) {
    ms = utcMillis(Number(date[1]), Number(date[2]), Number(date[3]));
  } else {
    const m = DATE_TIME.exec(value);
    if (!m) return null;
    const [hours, minutes, seconds] = [Number(m[4]), Number(m[5]), Number(m[6] ?? 0)];
    const [offsetHours, offsetMinutes] = [Number(m[9] ?? 0), Number(m[10] ?? 0)];
    if (hours > 23 || minutes > 59 || seconds > 59 || offsetHours > 23 || offsetMinutes > 59) return null;
    // Digits past the millisecond are dropped, not rounded: rounding could carry past LATEST_INSTANT.
    const fraction = Number((m[7] ?? '0').padEnd(3, '0').slice(0, 3));
    const local = utcMillis(Number(m[1]), Number(m[2]), Number(m[3]), hours, minutes, seconds, fraction);
    const offset = (m[8] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
    ms = local === null ? null : local - offset;
  }
  return ms !== null && ms >= EARLIEST_MS && ms <= LATEST_MS ? new Date(ms).toISOString() : null;
}

/** What a date field takes, as its error message says it. */
export const DATE_FORMS = 'a date (YYYY-MM-DD) or an ISO 8601 date-time, from 0001-01-01 to 9999-12-31 UTC';

/** True when `value` is an instant as parseSince returns it: UTC, with milliseconds, in range. */
export function isInstant(value: string): boolean {
  return parseSince(value) === value;
}
