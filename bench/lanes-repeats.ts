/**
 * The lanes stage's repeats (`fanout-lanes.ts`): every (W, S) burst runs R times, once a round,
 * and the report states the median over them, because one burst's timed figures moved by more
 * than 15% from one stage run to the next. Results saved before repeats existed hold one run per
 * (W, S): each is a group of one, its median the run itself.
 */
import { mean, median } from './cpu-reference.ts';
import type { LanesRun } from './fanout-lanes.ts';
import { medianSummary } from './latency.ts';

/** The repeats of one (W, S), in the order they ran, and their median. */
export interface LanesGroup {
  workers: number;
  subscribers: number;
  repeats: readonly LanesRun[];
  median: LanesRun;
}

/** The repeats of `workers` delivering processes at `subscribers`. */
export const repeatsOf = (runs: readonly LanesRun[], workers: number, subscribers: number) => runs.filter((run) => run.workers === workers && run.subscribers === subscribers);

/** The median over `repeats` of one figure. */
export const medianOf = (repeats: readonly LanesRun[], figure: (run: LanesRun) => number) => median(repeats.map(figure));

/** The mean over `repeats` of one figure. */
export const meanOf = (repeats: readonly LanesRun[], figure: (run: LanesRun) => number) => mean(repeats.map(figure));

/** The delivering processes' CPU of a run (ms): the stack's own process and the lane workers. */
export const deliveringCpuMs = (run: Pick<LanesRun, 'cpuMs'>) => run.cpuMs.stack + run.cpuMs.laneWorkers;

/**
 * Deliveries per CPU-second over all of `repeats` together: their deliveries ÷ their delivering
 * CPU, summed before dividing. One burst's CPU window is short (about a second of CPU, read from
 * /proc in 10 ms ticks, split across up to 4 processes) and its rate moved by a fifth from burst
 * to burst; the ratio of totals weighs every tick once, where a median of rates keeps one burst's.
 */
export function pooledDeliveriesPerCpuSecond(repeats: readonly LanesRun[]): number {
  const cpuMs = repeats.reduce((sum, run) => sum + deliveringCpuMs(run), 0);
  const deliveries = repeats.reduce((sum, run) => sum + run.deliveries, 0);
  return cpuMs > 0 ? deliveries / (cpuMs / 1000) : 0;
}

/**
 * A run whose every figure is the median of that figure over `repeats` (of one W and S), except
 * CPU: its figures are the mean per burst (the repeats' total ÷ their count), so that deliveries
 * per CPU-second is the ratio of totals (`pooledDeliveriesPerCpuSecond`). Figures derived from
 * several (CPU per delivery, busy cores, the posting bound) are then taken from these. Lane
 * failures are the total, so one failed lane in any repeat still shows.
 */
export function medianRun(repeats: readonly LanesRun[]): LanesRun {
  const first = repeats[0];
  if (first === undefined) throw new Error('no repeats to take the median of');
  if (repeats.length === 1) return first;
  const of = (figure: (run: LanesRun) => number) => medianOf(repeats, figure);
  const mean = (figure: (run: LanesRun) => number) => meanOf(repeats, figure);
  const processes = [...new Set(repeats.flatMap((run) => Object.keys(run.deliveriesByProcess)))];
  return {
    workers: first.workers,
    subscribers: first.subscribers,
    events: first.events,
    expectedDeliveries: first.expectedDeliveries,
    deliveries: of((run) => run.deliveries),
    deliveriesPerSecond: of((run) => run.deliveriesPerSecond),
    firstDeliveryMs: of((run) => run.firstDeliveryMs),
    latency: medianSummary(repeats.map((run) => run.latency)),
    fanoutInvocations: of((run) => run.fanoutInvocations),
    laneInvocations: of((run) => run.laneInvocations),
    laneFailures: repeats.reduce((sum, run) => sum + run.laneFailures, 0),
    deliveriesByProcess: Object.fromEntries(processes.map((name) => [name, of((run) => run.deliveriesByProcess[name] ?? 0)])),
    cpuMs: {
      stack: mean((run) => run.cpuMs.stack),
      laneWorkers: mean((run) => run.cpuMs.laneWorkers),
      dynamoDbLocal: mean((run) => run.cpuMs.dynamoDbLocal),
      machine: mean((run) => run.cpuMs.machine),
    },
    windowMs: mean((run) => run.windowMs),
    deliveriesPerCpuSecond: pooledDeliveriesPerCpuSecond(repeats),
    loadBefore: of((run) => run.loadBefore),
  };
}

/** The runs grouped by (W, S), by subscribers then workers, each group with its median. */
export function groupRepeats(runs: readonly LanesRun[]): LanesGroup[] {
  const sizes = [...new Set(runs.map((run) => run.subscribers))].sort((a, b) => a - b);
  const workers = [...new Set(runs.map((run) => run.workers))].sort((a, b) => a - b);
  return sizes.flatMap((subscribers) =>
    workers.flatMap((count) => {
      const repeats = repeatsOf(runs, count, subscribers);
      return repeats.length === 0 ? [] : [{ workers: count, subscribers, repeats, median: medianRun(repeats) }];
    }),
  );
}
