/**
 * A Lambda function for the simulation: execution environments created on demand (a cold start
 * takes time), one invocation at a time in each, reused while warm. An invocation past the
 * function's timeout is reported as an error; its environment is then stopped: calls it had
 * already started complete (their effects land, as a request in flight does), but anything it
 * starts afterwards never begins, and the environment is never used again.
 */
import type { Random } from '../kernel/random.ts';
import type { VirtualTime } from '../kernel/virtual-time.ts';

/** One execution environment: what the handler module built at init, and whether it still runs. */
export interface Environment<Context> {
  id: number;
  context: Context;
  busy: boolean;
  stopped: boolean;
}

export interface FunctionOptions<Context> {
  name: string;
  time: VirtualTime;
  random: Random;
  timeoutMs: number;
  /** Builds an environment's context; `alive()` is false once the environment is stopped. */
  init: (alive: () => boolean) => Context;
  /** Typical cold start (ms); a cold environment's first invocation waits this long. */
  coldStartMs: number;
}

export type Invocation<T> = { kind: 'ok'; value: T } | { kind: 'error'; error: unknown; timedOut: boolean };

export class LambdaFunction<Context> {
  private readonly environments: Array<Environment<Context>> = [];
  private nextId = 1;
  invocations = 0;
  timeouts = 0;

  constructor(private readonly options: FunctionOptions<Context>) {}

  async invoke<T>(run: (context: Context) => Promise<T>): Promise<Invocation<T>> {
    const { time, random } = this.options;
    this.invocations += 1;
    const idle = this.environments.filter((environment) => !environment.busy && !environment.stopped);
    // Lambda may start a new environment even when one is idle (scaling, placement).
    let environment = idle.length > 0 && !random.chance(0.1) ? random.pick(idle) : undefined;
    if (environment === undefined) {
      const created: Environment<Context> = { id: this.nextId++, context: undefined as Context, busy: true, stopped: false };
      created.context = this.options.init(() => !created.stopped);
      this.environments.push(created);
      environment = created;
      await time.sleep(random.latency(this.options.coldStartMs, this.options.coldStartMs * 3, 0.1));
    }
    const chosen = environment;
    chosen.busy = true;
    const work = run(chosen.context).then(
      (value): Invocation<T> => ({ kind: 'ok', value }),
      (error: unknown): Invocation<T> => ({ kind: 'error', error, timedOut: false }),
    );
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<Invocation<T>>((resolve) => {
      // The virtual clock's setTimeout (installed while a schedule runs).
      timer = setTimeout(() => resolve({ kind: 'error', error: new Error(`${this.options.name} timed out after ${this.options.timeoutMs} ms`), timedOut: true }), this.options.timeoutMs);
    });
    const outcome = await Promise.race([work, timeout]);
    clearTimeout(timer);
    if (outcome.kind === 'error' && outcome.timedOut) {
      this.timeouts += 1;
      chosen.stopped = true;
      return outcome;
    }
    chosen.busy = false;
    return outcome;
  }
}

/** A call an environment makes: it never starts once the environment is stopped. */
export function guarded<A extends unknown[], R>(alive: () => boolean, call: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return (...args: A) => (alive() ? call(...args) : new Promise<R>(() => {}));
}
