/**
 * Virtual time for the simulation: while installed, `setTimeout`, `setInterval` and their
 * clears run on a clock that only moves when the simulation says so, and `Math.random` draws
 * from the schedule's seeded source. Between two timers every pending promise callback runs
 * (one hop through the real `setImmediate`, which the relay's code never uses), so a schedule
 * is a pure function of its seed: the same timers fire in the same order at the same times.
 */
import type { Random } from './random.ts';

interface Timer {
  id: number;
  at: number;
  order: number;
  callback: () => void;
  repeatMs?: number;
}

/** What `setTimeout` returns in Node: code may call these on it. */
class TimerHandle {
  constructor(readonly id: number) {}
  unref(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  hasRef(): boolean {
    return true;
  }
  [Symbol.toPrimitive](): number {
    return this.id;
  }
}

const realSetImmediate = globalThis.setImmediate;

export class VirtualTime {
  private nowMs = 0;
  private order = 0;
  private nextId = 1;
  private readonly timers = new Map<number, Timer>();
  /** Timers by due time; rebuilt lazily (a min-heap over `at`, then `order`). */
  private heap: Timer[] = [];
  private saved: { setTimeout: typeof setTimeout; clearTimeout: typeof clearTimeout; setInterval: typeof setInterval; clearInterval: typeof clearInterval; random: () => number } | undefined;

  constructor(startMs = 0) {
    this.nowMs = startMs;
  }

  /** Whole milliseconds, as `Date.now()` gives them (timers themselves keep fractions). */
  now(): number {
    return Math.floor(this.nowMs);
  }

  install(random: Random): void {
    if (this.saved !== undefined) throw new Error('virtual time is installed already');
    this.saved = { setTimeout: globalThis.setTimeout, clearTimeout: globalThis.clearTimeout, setInterval: globalThis.setInterval, clearInterval: globalThis.clearInterval, random: Math.random };
    const schedule = (callback: (...args: unknown[]) => void, ms: number | undefined, args: unknown[], repeat: boolean): TimerHandle => {
      const delay = Math.max(0, Number.isFinite(ms) ? Number(ms) : 0);
      return this.add(() => callback(...args), delay, repeat ? Math.max(1, delay) : undefined);
    };
    globalThis.setTimeout = ((callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => schedule(callback, ms, args, false)) as unknown as typeof setTimeout;
    globalThis.setInterval = ((callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => schedule(callback, ms, args, true)) as unknown as typeof setInterval;
    const clear = (handle: unknown): void => {
      if (handle instanceof TimerHandle) this.timers.delete(handle.id);
      else if (typeof handle === 'number') this.timers.delete(handle);
    };
    globalThis.clearTimeout = clear as typeof clearTimeout;
    globalThis.clearInterval = clear as typeof clearInterval;
    Math.random = () => random.next();
  }

  uninstall(): void {
    const saved = this.saved;
    if (saved === undefined) return;
    globalThis.setTimeout = saved.setTimeout;
    globalThis.clearTimeout = saved.clearTimeout;
    globalThis.setInterval = saved.setInterval;
    globalThis.clearInterval = saved.clearInterval;
    Math.random = saved.random;
    this.saved = undefined;
  }

  /** A promise that resolves `ms` from now on the virtual clock. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.add(resolve, Math.max(0, ms)));
  }

  /** Runs `callback` at `ms` from now. */
  at(ms: number, callback: () => void): void {
    this.add(callback, Math.max(0, ms));
  }

  pending(): number {
    return this.timers.size;
  }

  /**
   * Fires timers in time order until `stop` says so, no timer is left, or the clock would pass
   * `untilMs`; every promise callback runs between two timers.
   */
  async run(untilMs: number, stop: () => boolean = () => false): Promise<void> {
    for (;;) {
      await settle();
      if (stop()) return;
      const timer = this.popDue(untilMs);
      if (timer === undefined) {
        this.nowMs = Math.max(this.nowMs, untilMs);
        return;
      }
      this.nowMs = Math.max(this.nowMs, timer.at);
      if (timer.repeatMs !== undefined) {
        timer.at = this.nowMs + timer.repeatMs;
        timer.order = this.order++;
        this.push(timer);
      } else this.timers.delete(timer.id);
      timer.callback();
    }
  }

  private add(callback: () => void, delayMs: number, repeatMs?: number): TimerHandle {
    const timer: Timer = { id: this.nextId++, at: this.nowMs + delayMs, order: this.order++, callback, ...(repeatMs === undefined ? {} : { repeatMs }) };
    this.timers.set(timer.id, timer);
    this.push(timer);
    return new TimerHandle(timer.id);
  }

  private push(timer: Timer): void {
    const heap = this.heap;
    heap.push(timer);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!earlier(heap[index] as Timer, heap[parent] as Timer)) break;
      [heap[index], heap[parent]] = [heap[parent] as Timer, heap[index] as Timer];
      index = parent;
    }
  }

  /** The earliest live timer due at or before `untilMs`, removed from the heap. */
  private popDue(untilMs: number): Timer | undefined {
    const heap = this.heap;
    while (heap.length > 0) {
      const top = heap[0] as Timer;
      if (this.timers.get(top.id) !== top) {
        this.removeTop();
        continue;
      }
      if (top.at > untilMs) return undefined;
      this.removeTop();
      return top;
    }
    return undefined;
  }

  private removeTop(): void {
    const heap = this.heap;
    const last = heap.pop() as Timer;
    if (heap.length === 0) return;
    heap[0] = last;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let smallest = index;
      if (left < heap.length && earlier(heap[left] as Timer, heap[smallest] as Timer)) smallest = left;
      if (right < heap.length && earlier(heap[right] as Timer, heap[smallest] as Timer)) smallest = right;
      if (smallest === index) return;
      [heap[index], heap[smallest]] = [heap[smallest] as Timer, heap[index] as Timer];
      index = smallest;
    }
  }
}

function earlier(a: Timer, b: Timer): boolean {
  return a.at < b.at || (a.at === b.at && a.order < b.order);
}

/** Lets every queued promise callback run (they all run before the real macrotask does). */
function settle(): Promise<void> {
  return new Promise((resolve) => realSetImmediate(resolve));
}
