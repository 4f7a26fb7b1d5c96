/** Formatting for people: dates, numbers, shares. */

/** `2026-11-25T10:00:00.123Z` as `2026-11-25 10:00:00 UTC`. */
export function when(iso: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})/.exec(iso);
  return match ? `${match[1]} ${match[2]} UTC` : iso;
}

/** A count with thousands separators. */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** A share as a percentage with at most one decimal; "0%" of a zero quota. */
export function percent(part: number, whole: number): string {
  if (whole <= 0) return '0%';
  const value = (100 * part) / whole;
  if (value > 0 && value < 0.1) return '<0.1%';
  return `${value >= 10 || value === 0 ? Math.round(value) : value.toFixed(1)}%`;
}

/** A month `2026-11` as `November 2026`. */
export function month(yyyyMm: string): string {
  const [year, mm] = yyyyMm.split('-');
  const name = new Date(Date.UTC(Number(year), Number(mm) - 1, 1)).toLocaleString('en-US', { month: 'long', timeZone: 'UTC' });
  return `${name} ${year}`;
}
