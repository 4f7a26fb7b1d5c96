import { readFileSync } from 'node:fs';

/** A process's (or one thread's) CPU time so far, in µs, from its /proc stat line (Linux). */
function cpuUs(statFile: string): number {
  const line = readFileSync(statFile, 'utf8');
  const fields = line.slice(line.lastIndexOf(')') + 2).split(' ');
  // utime and stime, the 14th and 15th fields, in clock ticks of 10 ms.
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** The CPU a process has used so far, in µs: its main thread's, and all its threads' together. */
export function processCpu(pid: number): { main: number; all: number } {
  return { main: cpuUs(`/proc/${pid}/task/${pid}/stat`), all: cpuUs(`/proc/${pid}/stat`) };
}
