/**
 * What the local stack's handlers cost, counted the way the cloud bills them: invocations and
 * duration per function, DynamoDB request units per function (every call the handlers make
 * reports its ConsumedCapacity to the `CapacityMeter` of its function), and PostToConnection
 * calls to the `@connections` endpoint. `npm run bench` reads these between scenarios.
 *
 * Attribution of request units to functions: the local stack builds each function's runtime
 * over a DynamoDB client metered by `meterOf(name)`, so every unit lands with its function.
 */
import { CapacityMeter } from '../src/store/capacity-meter.ts';
import type { CapacityTotals } from '../src/store/capacity-meter.ts';

export const FUNCTION_NAMES = ['http', 'authorizer', 'socket', 'fanout', 'stream', 'bridges', 'sinkretry', 'fanoutlane'] as const;
export type FunctionName = (typeof FUNCTION_NAMES)[number];

export interface FunctionUsage {
  invocations: number;
  /** Invocations that have returned (or thrown); `invocations - completed` are in flight. */
  completed: number;
  /** Invocations that threw (Lambda function errors). */
  errors: number;
  /** Wall-clock time inside the handler, summed (ms). */
  durationMs: number;
  /** Duration as Lambda bills it: each invocation rounded up to the next millisecond, summed. */
  billedMs: number;
  /** The longest single invocation (ms), to hold against the function's timeout. */
  maxDurationMs: number;
  readUnits: number;
  writeUnits: number;
  /** DynamoDB calls, refused ones (a failed conditional write) included. */
  dynamoCalls: number;
  /** Reads that found nothing (reported 0 units) and what DynamoDB bills them at least. */
  emptyReads: number;
  emptyReadUnits: number;
  /** Refused conditional writes and what DynamoDB bills them at least. */
  refusedWrites: number;
  refusedWriteUnits: number;
}

export interface StackUsage {
  functions: Record<FunctionName, FunctionUsage>;
  /** Socket invocations by route key (`$connect`, `$default`, `$disconnect`). */
  socketRoutes: Record<string, number>;
  /** Stream records handed to the fan-out function (after the mapping's filter). */
  fanoutRecords: number;
  /**
   * PostToConnection calls answered while the longest fan-out invocation (the one
   * `functions.fanout.maxDurationMs` times) ran: its deliveries. Not its records × subscribers,
   * because a record can release a session's held events (its order state's wake-up), so one
   * record of a batch can carry a whole burst's deliveries.
   */
  fanoutLongestInvocationPosts: number;
  /** PostToConnection calls the `@connections` endpoint answered, by status. */
  postToConnection: { calls: number; byStatus: Record<string, number> };
  /** Request units over every function's meter. */
  dynamo: CapacityTotals;
}

const emptyFunction = (): FunctionUsage => ({ invocations: 0, completed: 0, errors: 0, durationMs: 0, billedMs: 0, maxDurationMs: 0, readUnits: 0, writeUnits: 0, dynamoCalls: 0, emptyReads: 0, emptyReadUnits: 0, refusedWrites: 0, refusedWriteUnits: 0 });

export class UsageCounters {
  private readonly meters = new Map<FunctionName, CapacityMeter>();
  private calls = new Map<FunctionName, FunctionUsage>();
  private routes = new Map<string, number>();
  private records = 0;
  private longestInvocationPosts = 0;
  private posts = new Map<number, number>();

  /** The meter the DynamoDB client of function `name` reports to (one per function). */
  meterOf(name: FunctionName): CapacityMeter {
    let meter = this.meters.get(name);
    if (meter === undefined) {
      meter = new CapacityMeter();
      this.meters.set(name, meter);
    }
    return meter;
  }

  /** Counts one invocation of `name` and its duration; for fan-out, the posts answered while its longest one ran. */
  async invoke<T>(name: FunctionName, work: () => Promise<T>): Promise<T> {
    const usage = this.usageOf(name);
    usage.invocations += 1;
    const startedAt = performance.now();
    const postsBefore = this.postsAnswered();
    try {
      return await work();
    } catch (error) {
      usage.errors += 1;
      throw error;
    } finally {
      const elapsed = performance.now() - startedAt;
      usage.completed += 1;
      usage.durationMs += elapsed;
      usage.billedMs += Math.max(1, Math.ceil(elapsed));
      // Fan-out invocations on a shard run one after another (parallelization factor 1), so the
      // posts answered in this one's window are its own and its lane workers'.
      if (name === 'fanout' && elapsed >= usage.maxDurationMs) this.longestInvocationPosts = this.postsAnswered() - postsBefore;
      usage.maxDurationMs = Math.max(usage.maxDurationMs, elapsed);
    }
  }

  socketRoute(routeKey: string): void {
    this.routes.set(routeKey, (this.routes.get(routeKey) ?? 0) + 1);
  }

  fanoutBatch(records: number): void {
    this.records += records;
  }

  post(status: number): void {
    this.posts.set(status, (this.posts.get(status) ?? 0) + 1);
  }

  snapshot(): StackUsage {
    const functions = Object.fromEntries(
      FUNCTION_NAMES.map((name) => {
        const usage = { ...this.usageOf(name) };
        const totals = this.meters.get(name)?.snapshot();
        if (totals !== undefined) {
          usage.readUnits += totals.readUnits;
          usage.writeUnits += totals.writeUnits;
          usage.dynamoCalls += totals.calls;
          usage.emptyReads += totals.emptyReads;
          usage.emptyReadUnits += totals.emptyReadUnits;
          usage.refusedWrites += totals.refusedWrites;
          usage.refusedWriteUnits += totals.refusedWriteUnits;
        }
        return [name, usage];
      }),
    ) as Record<FunctionName, FunctionUsage>;
    const dynamo = [...this.meters.values()]
      .map((meter) => meter.snapshot())
      .reduce((sum, totals) => {
        const total = { ...sum };
        for (const key of Object.keys(sum) as Array<keyof CapacityTotals>) total[key] += totals[key];
        return total;
      }, new CapacityMeter().snapshot());
    const byStatus = Object.fromEntries([...this.posts].map(([status, count]) => [String(status), count]));
    return {
      functions,
      socketRoutes: Object.fromEntries(this.routes),
      fanoutRecords: this.records,
      fanoutLongestInvocationPosts: this.longestInvocationPosts,
      postToConnection: { calls: this.postsAnswered(), byStatus },
      dynamo,
    };
  }

  /** Zeroes every counter, the meters included. */
  reset(): void {
    this.calls = new Map();
    this.routes = new Map();
    this.records = 0;
    this.longestInvocationPosts = 0;
    this.posts = new Map();
    for (const meter of this.meters.values()) meter.reset();
  }

  /** PostToConnection calls answered so far, every status (a handful of keys to sum). */
  private postsAnswered(): number {
    return [...this.posts.values()].reduce((sum, count) => sum + count, 0);
  }

  private usageOf(name: FunctionName): FunctionUsage {
    let usage = this.calls.get(name);
    if (usage === undefined) {
      usage = emptyFunction();
      this.calls.set(name, usage);
    }
    return usage;
  }
}
