/**
 * The CPU yardstick: a fixed reference pipeline over the same corpus, timed in alternation
 * with the relay's pipeline in the same run, so the CPU figure can be stated as a ratio that
 * does not move with the host (a slower or busier machine slows both alike).
 *
 * It does what the relay's pipeline does in kind, with none of the relay's code: parse each
 * event's text, walk the parsed value (every key and string looked at), and serialize it again.
 * Do not change it: a changed reference makes every earlier ratio incomparable.
 */
export function referencePipeline(texts: readonly string[]): number {
  let sink = 0;
  for (const text of texts) {
    const value = JSON.parse(text) as unknown;
    sink += walk(value);
    sink += JSON.stringify(value).length;
  }
  return sink;
}

/**
 * One slice of the yardstick beside asynchronous work: the reference over `texts`, repeated until
 * it has used at least `leastMs` of this thread's CPU; answers the events run and that CPU. The
 * reference is synchronous, so all its work is on this thread, and this thread's CPU is its cost.
 * The process's CPU also counts the collector's and compiler's background threads, which go on
 * with what the relay's run before the slice left them (sweeping its garbage): slices so counted
 * moved from 2.2 to 4.7 µs per event in one stage run.
 */
export function referenceSlice(texts: readonly string[], leastMs: number): { events: number; cpuMs: number; sink: number } {
  if (typeof process.threadCpuUsage !== 'function') throw new Error(`the CPU yardstick needs process.threadCpuUsage (Node 22; this is ${process.version}): run it through npm, which uses the pinned node_modules/.bin/node`);
  const started = process.threadCpuUsage();
  let events = 0;
  let cpuMs = 0;
  let sink = 0;
  while (events < texts.length || cpuMs < leastMs) {
    sink += referencePipeline(texts);
    events += texts.length;
    const used = process.threadCpuUsage(started);
    cpuMs = (used.user + used.system) / 1000;
  }
  return { events, cpuMs, sink };
}

function walk(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (typeof value !== 'object' || value === null) return 1;
  if (Array.isArray(value)) return value.reduce((total: number, item: unknown) => total + walk(item), 0);
  let total = 0;
  for (const [key, item] of Object.entries(value)) total += key.length + walk(item);
  return total;
}

/**
 * Times `subject` and `reference` in `slices` alternating pairs of slices of about `sliceMs`
 * each (the order swapped every pair), so both see the same machine; answers each one's ms per
 * round over all slices, and the median over the pairs of subject ÷ reference: a burst of other
 * work on the shared cores spoils a pair or two, not the median.
 */
export function alternate(subject: () => void, reference: () => void, sliceMs: number, slices: number): { subjectMsPerRound: number; referenceMsPerRound: number; medianPairRatio: number } {
  const totals = { subject: { ms: 0, rounds: 0 }, reference: { ms: 0, rounds: 0 } };
  const slice = (which: 'subject' | 'reference'): number => {
    const body = which === 'subject' ? subject : reference;
    const started = performance.now();
    let rounds = 0;
    while (rounds < 10 || performance.now() - started < sliceMs) {
      body();
      rounds += 1;
    }
    const ms = performance.now() - started;
    totals[which].ms += ms;
    totals[which].rounds += rounds;
    return ms / rounds;
  };
  const pairRatios: number[] = [];
  for (let index = 0; index < slices; index += 1) {
    const order: Array<'subject' | 'reference'> = index % 2 === 0 ? ['subject', 'reference'] : ['reference', 'subject'];
    const perRound = Object.fromEntries(order.map((which) => [which, slice(which)])) as Record<'subject' | 'reference', number>;
    pairRatios.push(perRound.subject / perRound.reference);
  }
  return { subjectMsPerRound: totals.subject.ms / totals.subject.rounds, referenceMsPerRound: totals.reference.ms / totals.reference.rounds, medianPairRatio: median(pairRatios) };
}

/** The arithmetic mean; NaN for none. */
export const mean = (values: readonly number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;

/** The median (the mean of the middle two for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}
