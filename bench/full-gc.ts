/**
 * A full garbage collection on demand, for the start of a CPU window. The bench process holds the
 * whole local stack and every stage's results (hundreds of MB of heap); a major collection of
 * that heap costs a few hundred ms of CPU, and whether one landed inside a 1-second window or
 * just outside it moved one burst's CPU by a fifth. Collecting first makes the window's
 * collections those of its own garbage. V8 exposes `gc` only behind a flag; setting the flag at
 * run time, then taking `gc` from a context created after it, gets it without a command-line
 * option (the npm scripts run through tsx, which owns the command line).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collect: (() => void) | undefined;

/** Runs a full, synchronous garbage collection of this process's heap. */
export function fullGc(): void {
  if (collect === undefined) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  }
  collect();
}

/** Starts a CPU window on a collected heap; the returned function gives this process's CPU-ms since. */
export function cpuWindowFromCollectedHeap(): () => number {
  fullGc();
  const start = process.cpuUsage();
  return () => cpuMsSince(start);
}

/** This process's CPU (user + system) in milliseconds since `start` (a `process.cpuUsage()`). */
export function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}
