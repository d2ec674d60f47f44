/**
 * What one schedule plays: emitters, consumers and the faults AWS may throw at them, drawn by
 * fast-check from a seed (so a failing schedule shrinks to a smaller one that still fails).
 * Everything finer (latencies, which call a fault hits, interleavings) comes from `seed`.
 */
import fc from 'fast-check';

export interface EmitterPlan {
  /** Session names come from a small pool, so two emitters often share one (AEP-0001 §5.2). */
  session: string;
  agent: string;
  startMs: number;
  events: number;
  /** Chance that a position is skipped (a legal gap, AEP-0001 §7.2). */
  skipChance: number;
  /** The emitter restarts after this many events: a new connection, the next epoch, `seq` from 0. */
  restartAfter?: number;
  /** Milliseconds between two frames (0: pipelined in one burst). */
  spacingMs: number;
  /** Whether it waits for the relay's hello before its events. */
  waitsForHello: boolean;
  /** `notice` only, or a mix with `debug`/`info` (droppable under backpressure, AEP-0003 §8.4). */
  severities: 'notice' | 'mixed';
  /** The first epoch (a counter seeded at startup, AEP-0001 §7.2, is often above 0). */
  firstEpoch: number;
}

export interface ConsumerPlan {
  session: string;
  startMs: number;
  /** After this many events in all, the consumer drops its connection and resumes. */
  dropsAfter: number[];
  /** After this many events it stops reading for a while (a paused tab, a slow phone). */
  pause?: { afterEvents: number; forMs: number };
  /** Resume from the position a `closing` named (when it got one) rather than its own highest. */
  resumesFromClosing: boolean;
}

export interface FaultPlan {
  /** Faults strike only inside this window; after it the world is quiet (invariant I5). */
  windowMs: [number, number];
  /** Per DynamoDB attempt: throttled, acknowledgement lost after the write, stalled for seconds. */
  throttle: number;
  lostAck: number;
  stall: number;
  /** Per fan-out invocation: it crashes after its work (a function error). */
  fanoutCrash: number;
  /** Per post: it takes seconds. */
  slowPost: number;
  /** Per frame: its invocation starts up to 1.5 s late (a cold start). */
  lateHandOff: number;
  /** Per successful batch: the mapping invokes it again (at least once). */
  duplicateBatch: number;
  /** Per record: discarded as older than the mapping's maximum age. */
  overAge: number;
  /** A partition split of the first session's partition at this time. */
  splitAtMs?: number;
  /** Every `hello` frame's invocation starts this late (a cold start of the hello's own invocation); not drawn, set by a test. */
  helloHandOffMs?: number;
}

export interface Scenario {
  seed: number;
  emitters: EmitterPlan[];
  consumers: ConsumerPlan[];
  faults: FaultPlan;
}

const SESSIONS = ['s0', 's1'];

const emitterPlan = (index: number) =>
  fc.record({
    session: fc.constantFrom(...SESSIONS),
    agent: fc.constant(`agent${index}`),
    startMs: fc.integer({ min: 0, max: 2_000 }),
    events: fc.integer({ min: 1, max: 40 }),
    skipChance: fc.constantFrom(0, 0, 0.1, 0.3),
    restartAfter: fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }),
    spacingMs: fc.constantFrom(0, 0, 2, 10, 40),
    waitsForHello: fc.boolean(),
    severities: fc.constantFrom('notice' as const, 'mixed' as const),
    firstEpoch: fc.constantFrom(0, 0, 0, 3),
  });

const consumerPlan = fc.record({
  session: fc.constantFrom(...SESSIONS),
  startMs: fc.integer({ min: 0, max: 3_000 }),
  dropsAfter: fc.uniqueArray(fc.integer({ min: 1, max: 60 }), { maxLength: 3 }).map((drops) => [...drops].sort((a, b) => a - b)),
  pause: fc.option(fc.record({ afterEvents: fc.integer({ min: 0, max: 30 }), forMs: fc.integer({ min: 500, max: 15_000 }) }), { nil: undefined }),
  resumesFromClosing: fc.boolean(),
});

const chance = (...values: number[]) => fc.constantFrom(0, ...values);

const faultPlan = fc.record({
  windowMs: fc.tuple(fc.integer({ min: 0, max: 3_000 }), fc.integer({ min: 0, max: 8_000 })).map(([start, length]): [number, number] => [start, start + length]),
  throttle: chance(0.05, 0.3, 0.6),
  lostAck: chance(0.02, 0.1),
  stall: chance(0.002, 0.01),
  fanoutCrash: chance(0.1, 0.4),
  slowPost: chance(0.02, 0.2),
  lateHandOff: chance(0.05, 0.3),
  duplicateBatch: chance(0.05, 0.3),
  overAge: chance(0.01, 0.05),
  splitAtMs: fc.option(fc.integer({ min: 0, max: 6_000 }), { nil: undefined }),
});

export const scenarioArbitrary: fc.Arbitrary<Scenario> = fc.record({
  seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  emitters: fc.integer({ min: 1, max: 3 }).chain((count) => fc.tuple(...Array.from({ length: count }, (_, index) => emitterPlan(index)))),
  consumers: fc.array(consumerPlan, { minLength: 1, maxLength: 3 }),
  faults: faultPlan,
});
