/**
 * Waiting for a quiet machine before a CPU figure is taken. The bench machine's cores are
 * shared, and a figure taken under load measures the other work as much as the code (the
 * 44 µs once committed was taken at a 1-minute load of about 5; quiet, it is about a third).
 */
import { loadavg } from 'node:os';

export interface QuietWait {
  /** The 1-minute load average below which the machine counts as quiet. */
  maxLoad: number;
  /** The 1-minute load average when the wait ended. */
  load: number;
  waitedSeconds: number;
  /** False when the wait gave up: the figure is then taken anyway, at the load on record. */
  reached: boolean;
}

/** Polls the 1-minute load average every `everySeconds` until it is below `maxLoad`, for at most `maxWaitSeconds`. */
export async function waitForQuietMachine(maxLoad: number, maxWaitSeconds: number, log: (message: string) => void, everySeconds = 10): Promise<QuietWait> {
  const started = performance.now();
  const load = () => loadavg()[0] ?? Number.NaN;
  const waited = () => (performance.now() - started) / 1000;
  let announced = false;
  while (load() >= maxLoad && waited() < maxWaitSeconds) {
    if (!announced) log(`waiting up to ${maxWaitSeconds} s for the 1-minute load average (${load().toFixed(2)}) to fall below ${maxLoad}`);
    announced = true;
    await new Promise((resolve) => setTimeout(resolve, everySeconds * 1000));
  }
  return { maxLoad, load: load(), waitedSeconds: waited(), reached: load() < maxLoad };
}
