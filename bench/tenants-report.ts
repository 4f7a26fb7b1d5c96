/** The tenants benchmark's table: one column per build, one row per measure, in markdown. */
import type { Measured } from './tenants-measure.js';

/** The markdown table of `results`, with the admin CLI's tenant create times where they were measured. */
export function resultsTable(results: Measured[], admin: Record<string, number>, { starts, searches }: { starts: number; searches: number }): string[] {
  const f0 = (x: number) => x.toFixed(0);
  const f1 = (x: number) => x.toFixed(1);
  const f2 = (x: number) => x.toFixed(2);
  const rows: [string, (m: Measured) => string][] = [
    ['records', (m) => String(m.records)],
    ['database file (MiB)', (m) => f1(m.dbMiB)],
    [`server start to "listening" (ms, median of ${starts})`, (m) => f0(m.listenMs)],
    [`server start to a first search answered (ms, median of ${starts})`, (m) => f0(m.readyMs)],
    ['  first searches after a start that answered 503 (all starts)', (m) => String(m.starts.reduce((sum, s) => sum + s.refused, 0))],
    ['  in process: open + migrate (ms)', (m) => f2(m.startSteps.open!)],
    ['  in process: listTenants, the first-start check (ms)', (m) => f2(m.startSteps.listTenants!)],
    ['  in process: releaseClaims + idempotency sweep (ms)', (m) => f2(m.startSteps.releaseClaims! + m.startSteps.sweep!)],
    ['RSS after start (MiB)', (m) => f0(m.memory.afterStart)],
    ['RSS after one search in each of N tenants (MiB)', (m) => `${f0(m.memory.afterTenantSweep)} (N = ${m.memory.sweptTenants})`],
    [`RSS after ${searches} more searches (MiB); peak`, (m) => `${f0(m.memory.afterSearches)}; ${f0(m.memory.peak)}`],
    [`HTTP search, c=1, ${searches} in random small tenants: p50 / p99 (ms)`, (m) => `${f2(m.http.p50Ms)} / ${f2(m.http.p99Ms)}`],
    ['engine in process (SqliteSearchIndex), same searches: p50 / p99 (µs)', (m) => `${f0(m.engineUs.p50Ms)} / ${f0(m.engineUs.p99Ms)}`],
    ['load through SqliteRecordStore.create (records/s)', (m) => f0(m.records / m.loadSeconds)],
  ];
  const lines = [
    `| ${['measure', ...results.map((m) => m.label)].join(' | ')} |`,
    `|${' --- |'.repeat(results.length + 1)}`,
    ...rows.map(([name, cell]) => `| ${[name, ...results.map(cell)].join(' | ')} |`),
    `| admin CLI \`tenant create\` (ms, median of 3) | ${results.map((m) => (admin[m.label] === undefined ? '–' : f0(admin[m.label]!))).join(' | ')} |`,
  ];
  return lines;
}
