/** The quota month of an instant: `YYYY-MM` in UTC. */
export function quotaMonth(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** Whole seconds from `at` to the first instant of the next UTC month, at least 1. */
export function secondsToNextMonth(at: Date): number {
  const next = Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - at.getTime()) / 1000));
}

/** True when `month` is a well-formed `YYYY-MM` with a month from 01 to 12. */
export function isQuotaMonth(month: string): boolean {
  return /^\d{4}-(0[1-9]|1[0-2])$/.test(month);
}
