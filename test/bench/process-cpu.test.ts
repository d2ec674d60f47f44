import { describe, expect, it } from 'vitest';
import { machineBusyMs, parseMachineStat, parseProcessStat, processCpuMs } from '../../bench/process-cpu.ts';

describe('parseProcessStat', () => {
  it('reads the parent and user + system ticks after the name, whatever the name holds', () => {
    const line = '4242 (node (lane) x) S 4000 4242 4000 0 -1 4194560 5000 0 0 0 731 112 0 0 20 0 11 0 123456 1000000 20000 18446744073709551615';
    expect(parseProcessStat(line)).toEqual({ comm: 'node (lane) x', ppid: 4000, cpuTicks: 843 });
  });

  it('refuses a line that is not one', () => {
    expect(() => parseProcessStat('nothing here')).toThrow();
  });
});

describe('parseMachineStat', () => {
  it('counts idle and iowait as not busy', () => {
    const text = 'cpu  100 5 50 800 20 3 2 0 0 0\ncpu0 50 2 25 400 10 1 1 0 0 0\n';
    expect(parseMachineStat(text)).toEqual({ busyTicks: 160, totalTicks: 980 });
  });
});

describe('on this machine', () => {
  it('reads this process and the whole machine, both moving forward', () => {
    const before = processCpuMs(process.pid) as number;
    const machine = machineBusyMs();
    let spin = 0;
    const until = performance.now() + 60;
    while (performance.now() < until) spin += 1;
    expect(spin).toBeGreaterThan(0);
    expect(processCpuMs(process.pid)).toBeGreaterThan(before);
    expect(machineBusyMs()).toBeGreaterThan(machine);
    expect(processCpuMs(2 ** 22 + 12345)).toBeUndefined();
  });
});
