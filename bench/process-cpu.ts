/**
 * CPU time of processes and of the whole machine, from Linux's /proc: the lanes stage takes it
 * for every delivering process (the stack's, where fan-out runs, and each lane worker's), for
 * DynamoDB Local's JVM, and for the machine as a whole (other work on the shared cores included),
 * before and after each timed run.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU figures (USER_HZ; 100 on every common Linux). */
export const CLOCK_TICKS = (() => {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isSafeInteger(ticks) && ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
})();

/** A process's fields from the text of /proc/<pid>/stat: its name, parent, and user + system ticks. */
export function parseProcessStat(text: string): { comm: string; ppid: number; cpuTicks: number } {
  // The name is in parentheses and may hold spaces or ')': the fields start after the last ')'.
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open === -1 || close === -1) throw new Error('not a /proc/<pid>/stat line');
  const fields = text.slice(close + 2).trim().split(/\s+/);
  // After the name: state (3), ppid (4), …, utime (14), stime (15), counted from 1 with pid and comm.
  const ppid = Number(fields[1]);
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(ppid) || !Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error('a /proc/<pid>/stat line without its CPU fields');
  return { comm: text.slice(open + 1, close), ppid, cpuTicks: utime + stime };
}

/** The machine's busy and total ticks over all cores from the first line of /proc/stat (idle and iowait are not busy). */
export function parseMachineStat(text: string): { busyTicks: number; totalTicks: number } {
  const line = text.split('\n').find((candidate) => candidate.startsWith('cpu '));
  if (line === undefined) throw new Error('no cpu line in /proc/stat');
  const values = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = values.reduce((sum, value) => sum + value, 0);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  return { busyTicks: total - idle, totalTicks: total };
}

/** CPU milliseconds a process has used so far; undefined once it is gone. */
export function processCpuMs(pid: number): number | undefined {
  try {
    return (parseProcessStat(readFileSync(`/proc/${pid}/stat`, 'utf8')).cpuTicks * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** Busy CPU milliseconds of the whole machine (all cores) so far. */
export function machineBusyMs(): number {
  return (parseMachineStat(readFileSync('/proc/stat', 'utf8')).busyTicks * 1000) / CLOCK_TICKS;
}

/** The children of `parent` now, with their names and command lines. */
export function childProcesses(parent: number): Array<{ pid: number; comm: string; cmdline: string }> {
  const children: Array<{ pid: number; comm: string; cmdline: string }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = parseProcessStat(readFileSync(`/proc/${entry}/stat`, 'utf8'));
      if (stat.ppid !== parent) continue;
      children.push({ pid: Number(entry), comm: stat.comm, cmdline: readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ') });
    } catch {
      // Gone between the listing and the read.
    }
  }
  return children;
}
