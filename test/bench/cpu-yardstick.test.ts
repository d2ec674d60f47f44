import { describe, expect, it } from 'vitest';
import { referencePipeline, referenceSlice } from '../../bench/cpu-reference.ts';
import { fullGc } from '../../bench/full-gc.ts';

const texts = Array.from({ length: 20 }, (_, index) => JSON.stringify({ id: `e${index}`, type: 'tool.requested', data: { name: 'grep', args: ['-n', String(index)] } }));

describe('referenceSlice', () => {
  it('runs the reference over whole passes of the texts until this thread has used the least CPU asked', () => {
    const slice = referenceSlice(texts, 5);
    expect(slice.cpuMs).toBeGreaterThanOrEqual(5);
    expect(slice.events % texts.length).toBe(0);
    expect(slice.events).toBeGreaterThan(texts.length);
    // The sink is the reference's own output, pass after pass.
    expect(slice.sink).toBe((slice.events / texts.length) * referencePipeline(texts));
  });

  it('runs one whole pass even when no CPU is asked', () => {
    const slice = referenceSlice(texts, 0);
    expect(slice.events).toBe(texts.length);
  });
});

describe('fullGc', () => {
  it('collects on demand, again and again, without a command-line flag', () => {
    let garbage: unknown[] | undefined = Array.from({ length: 200_000 }, (_, index) => ({ index }));
    expect(garbage.length).toBe(200_000);
    garbage = undefined;
    const before = process.memoryUsage().heapUsed;
    fullGc();
    fullGc();
    expect(process.memoryUsage().heapUsed).toBeLessThan(before);
  });
});
