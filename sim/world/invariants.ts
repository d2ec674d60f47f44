/**
 * The delivery invariants (docs/protocol-and-guarantees.md, "Guarantees"), checked on what one schedule observed:
 *
 * - I1 live reach: every admitted event reaches every matching subscription still open at the
 *   end (after `from`); a subscription the relay ended is held to I4 instead.
 * - I2 resume: a consumer that resumes from positions it was given gets, over its chain of
 *   connections, every admitted event of its session, except an event of another emitter below
 *   a position it resumed from (AEP-0001 §5.2: a resume token names a bare session).
 * - I3 order: each emitter's events first arrive at a consumer (over its chain of connections:
 *   a consumer dedupes by `(source, id)`, AEP-0001 §7.4) in `(epoch, seq)` order, except events the
 *   relay recorded late; what a connection gets at or below its own `from` is a redelivery. A
 *   `debug`/`info` event whose post to the chain was throttled is excused: one runner may drop it
 *   there (AEP-0003 §8.4) and another post it later, a backfill the consumer orders (AEP-0001 §7.2).
 * - I4 honest positions: no position a `closing` names lies above a `notice`-or-above event of
 *   that session the connection had not received (unless resume serves it: recorded late above it).
 * - I5 bounded delay: once faults and emitters are done, every admitted event reaches every chain
 *   within `QUIET_BOUND_MS`: its post lands by then (a consumer that is not reading reads it
 *   later), not counting a pause of its consumer in which the relay ended its connection (for
 *   backpressure: the consumer resumes only once it reads again).
 * - I7 hello first: the relay's first frame on a consumer's connection is its `hello`, or the
 *   refusal of the connection (an `error` that answers no frame of its own, or `closing`), never an
 *   answer to a frame pipelined behind the hello (AEP-0003 §3.5.1); and it comes within
 *   `HELLO_ANSWER_BOUND_MS` of the hello (every request frame gets its answer, AEP-0003 §6.5).
 * - I6 cost: request units, posts and duplicates per event stay within `COST_BOUNDS`; under
 *   faults, duplicate posts per event stay within their own bound.
 *
 * `debug`/`info` events may be dropped toward a consumer that stopped reading (AEP-0003 §8.4), so
 * on a connection the gateway throttled they are not owed. Events of an emitter's session whose
 * last stream records the mapping discarded (retries exhausted, or past the maximum record age)
 * are not owed live or on resume until the session's next record: nothing brings fan-out back
 * to them (docs/protocol-and-guarantees.md, Guarantees, states this limit).
 */
import { eventKey } from './clients.ts';
import type { ConsumerConnection, ReceivedEvent } from './clients.ts';
import type { AdmittedEvent, Observation } from './world.ts';
import { QUIET_BOUND_MS } from './world.ts';

export interface Violation {
  invariant: 'I1' | 'I2' | 'I3' | 'I4' | 'I5' | 'I6' | 'I7';
  detail: string;
}

/**
 * What a fault-free schedule may cost at most (I6), as DynamoDB bills it, in the shape of the
 * bench's cost model: the event log's request units per admitted event, per fan-out batch and
 * per emitter's session (write units) and per subscription (a replay's reads); and posts per
 * event a consumer got for the first time (duplicates included). Set a little above what 2,000
 * fault-free schedules cost at most, so a claim, owner or registry write per event, or a flood of
 * duplicate posts, breaks them (each adds about a unit per event, or a post per delivery).
 */
export const COST_BOUNDS = {
  /** The event itself. */
  eventWriteUnitsPerEvent: 1,
  /** Per fan-out batch: each session's order-state commit, delivered mark and summary. */
  eventWriteUnitsPerBatch: 3.5,
  /** Once per emitter's session: its owner, first order state, wake-ups while a gap is open. */
  eventWriteUnitsPerEmitterSession: 10,
  eventReadUnitsPerEvent: 1.5,
  /** Per fan-out batch: a cold order state's load, a wake-up's delivered mark, a gap check. */
  eventReadUnitsPerBatch: 2,
  eventReadUnitsPerSubscriptionOrEmitter: 20,
  postsPerFirstDelivery: 1.5,
  /**
   * Under faults (retried and duplicated batches, fan-out timeouts): duplicates stay bounded too.
   * 400 schedules with every fault on posted at most 1.11 per first delivery past the
   * per-subscription allowance; a retry that redelivered whole runs would post several.
   */
  postsPerFirstDeliveryUnderFaults: 2,
  /** Around a replay-to-live handoff a subscription may get the events of the batch in flight twice. */
  postsPerSubscription: 10,
};

const LOW_SEVERITIES = new Set(['debug', 'info']);

function compare(a: { epoch: number; seq: number }, b: { epoch: number; seq: number }): number {
  return a.epoch !== b.epoch ? a.epoch - b.epoch : a.seq - b.seq;
}

const show = (event: { source: string; epoch: number; seq: number; id: string }) => `${event.id}@${event.epoch}:${event.seq}`;

export function checkInvariants(observation: Observation): Violation[] {
  const violations: Violation[] = [];
  // What is owed: every admitted event but those the documented discard limit strands.
  const bySession = new Map<string, AdmittedEvent[]>();
  const allBySession = new Map<string, AdmittedEvent[]>();
  for (const event of observation.admitted) {
    allBySession.set(event.session, [...(allBySession.get(event.session) ?? []), event]);
    if (observation.stranded.has(eventKey(event))) continue;
    bySession.set(event.session, [...(bySession.get(event.session) ?? []), event]);
  }
  const quietDeadline = observation.quietAtMs + QUIET_BOUND_MS;
  let firstDeliveries = 0;

  for (const consumer of observation.consumers) {
    const session = consumer.plan.session;
    const admitted = bySession.get(session) ?? [];
    const chain = consumer.connections;
    const throttledChain = chain.some((connection) => connection.throttled);
    const received = new Map<string, ReceivedEvent>();
    for (const connection of chain) for (const event of connection.events) if (!received.has(eventKey(event))) received.set(eventKey(event), event);
    firstDeliveries += received.size;

    // I7: the relay speaks first with its hello, or refuses the connection.
    for (const connection of chain) {
      const first = connection.firstFrame;
      if (first !== undefined && first.type !== 'hello' && first.type !== 'closing' && !(first.type === 'error' && first.id === undefined)) {
        violations.push({ invariant: 'I7', detail: `consumer ${consumer.index} connection ${connection.index}: the relay's first frame was ${first.type}${first.id === undefined ? '' : ` for ${first.id}`}, not its hello` });
      }
      const late = unansweredHelloFor(connection);
      if (late !== undefined) violations.push({ invariant: 'I7', detail: `consumer ${consumer.index} connection ${connection.index}: its hello had no answer (the relay's hello, or a refusal) within ${HELLO_ANSWER_BOUND_MS} ms: ${late}` });
    }

    // I1: the connection open at the end has every event after its `from`.
    const last = chain[chain.length - 1];
    if (last !== undefined && last.ended === undefined && last.subscribedAtMs !== undefined) {
      const got = new Set(last.events.map(eventKey));
      for (const event of admitted) {
        if (compare(event, last.from) <= 0 || got.has(eventKey(event))) continue;
        if (last.throttled && LOW_SEVERITIES.has(event.severity)) continue;
        violations.push({ invariant: 'I1', detail: `consumer ${consumer.index} connection ${last.index} (open, from ${last.from.epoch}:${last.from.seq}) never got ${show(event)} of ${event.source}` });
      }
    }

    // I2 and I5: over the chain.
    for (const event of admitted) {
      const got = received.get(eventKey(event));
      if (got === undefined) {
        if (throttledChain && LOW_SEVERITIES.has(event.severity)) continue;
        if (excusedByResume(chain, event)) continue;
        violations.push({ invariant: 'I2', detail: `consumer ${consumer.index} (session ${session}, ${chain.length} connections, resumed from ${chain.map((c) => `${c.from.epoch}:${c.from.seq}`).join(',')}) never got ${show(event)} of ${event.source}${event.lateAbove === undefined ? '' : ` (late above ${event.lateAbove.epoch}:${event.lateAbove.seq})`}` });
        continue;
      }
      const notReading = pausedBetween(pausesEndingAConnection(consumer.pauses, chain), observation.startedAtMs + observation.quietAtMs, got.postedAtMs);
      if (got.postedAtMs - observation.startedAtMs - notReading > quietDeadline) {
        violations.push({ invariant: 'I5', detail: `consumer ${consumer.index} got ${show(event)} of ${event.source} ${Math.round(got.postedAtMs - observation.startedAtMs - observation.quietAtMs)} ms after the world went quiet, ${Math.round(notReading)} ms of them not reading (bound ${QUIET_BOUND_MS} ms)` });
      }
    }

    violations.push(...orderViolations(consumer.index, chain, allBySession.get(session) ?? []));
    for (const connection of chain) violations.push(...closingViolations(consumer.index, connection, allBySession.get(session) ?? []));
  }

  violations.push(...costViolations(observation, firstDeliveries));
  return violations;
}

/**
 * How long a hello may wait for its answer: the hello's invocation answers, or refuses, within its
 * frame budget (`FRAME_BUDGET_MS`, 10 s, `socket/dispatch.ts`), and the post lands shortly after.
 */
export const HELLO_ANSWER_BOUND_MS = 12_000;

/** Why the connection's hello went unanswered past the bound, if it did. */
function unansweredHelloFor(connection: ConsumerConnection): string | undefined {
  if (connection.helloAtMs === undefined) return undefined;
  const deadline = connection.helloAtMs + HELLO_ANSWER_BOUND_MS;
  const answeredAtMs = connection.firstFrame?.atMs ?? (connection.ended?.byRelay === true ? connection.ended.atMs : undefined);
  if (answeredAtMs !== undefined) return answeredAtMs > deadline ? `the first frame came ${Math.round(answeredAtMs - connection.helloAtMs)} ms after it` : undefined;
  // Nothing came: a consumer that left before the bound had no answer owed yet.
  if (connection.ended !== undefined && connection.ended.atMs <= deadline) return undefined;
  return 'nothing came';
}

/** The pauses during which the relay ended one of the chain's connections (for backpressure): the consumer resumes only once it reads again. */
function pausesEndingAConnection(pauses: ReadonlyArray<{ fromMs: number; toMs: number }>, chain: readonly ConsumerConnection[]): Array<{ fromMs: number; toMs: number }> {
  return pauses.filter((pause) => chain.some((connection) => connection.ended?.byRelay === true && connection.ended.atMs >= pause.fromMs && connection.ended.atMs <= pause.toMs));
}

/** How long, between `fromMs` and `toMs`, the consumer was not reading. */
function pausedBetween(pauses: ReadonlyArray<{ fromMs: number; toMs: number }>, fromMs: number, toMs: number): number {
  return pauses.reduce((sum, pause) => sum + Math.max(0, Math.min(pause.toMs, toMs) - Math.max(pause.fromMs, fromMs)), 0);
}

/** An event of one emitter below a position the chain resumed from that another emitter's event gave (the bare-session ambiguity, AEP-0001 §5.2). */
function excusedByResume(chain: readonly ConsumerConnection[], event: AdmittedEvent): boolean {
  return chain.some((connection) => connection.fromSource !== undefined && connection.fromSource !== event.source && compare(event, connection.from) <= 0);
}

function orderViolations(consumer: number, chain: readonly ConsumerConnection[], admitted: readonly AdmittedEvent[]): Violation[] {
  const late = new Map(admitted.filter((event) => event.lateAbove !== undefined).map((event) => [eventKey(event), event]));
  const seen = new Set<string>();
  const highestBySource = new Map<string, ReceivedEvent>();
  const violations: Violation[] = [];
  // At or below a connection's `from` an event is one the consumer says it has: a redelivery, not its stream.
  const arrivals = chain.flatMap((connection) => connection.events.filter((event) => compare(event, connection.from) > 0).map((event) => ({ connection: connection.index, event })));
  for (const { connection, event } of arrivals) {
    const key = eventKey(event);
    if (seen.has(key)) continue;
    seen.add(key);
    const highest = highestBySource.get(event.source);
    // A `debug`/`info` event whose post to this chain was throttled may have been dropped there
    // (AEP-0003 §8.4) while another runner posted it later: a backfill (AEP-0001 §7.2), not owed in order.
    const droppable = LOW_SEVERITIES.has(event.severity) && chain.some((each) => each.throttledEvents.has(key));
    if (highest !== undefined && compare(event, highest) < 0 && !late.has(key) && !droppable) {
      violations.push({ invariant: 'I3', detail: `consumer ${consumer} got ${show(event)} (connection ${connection}) after ${show(highest)} of ${event.source}, and it was not recorded late` });
    }
    if (highest === undefined || compare(event, highest) > 0) highestBySource.set(event.source, event);
  }
  return violations;
}

function closingViolations(consumer: number, connection: ConsumerConnection, admitted: readonly AdmittedEvent[]): Violation[] {
  const violations: Violation[] = [];
  for (const closing of connection.closings) {
    const before = new Set(connection.events.filter((event) => event.atMs <= closing.atMs).map(eventKey));
    for (const named of closing.delivered) {
      // The emitter whose event the named position is: a bare position also covers other
      // emitters' events of the name, the ambiguity AEP-0001 §5.2 accepts (as for I2).
      const namedSource = connection.events.find((event) => event.session === named.session && compare(event, named) === 0)?.source;
      for (const event of admitted) {
        if (event.session !== named.session || LOW_SEVERITIES.has(event.severity)) continue;
        if (namedSource !== undefined && event.source !== namedSource) continue;
        if (compare(event, connection.from) <= 0 || compare(event, named) > 0 || before.has(eventKey(event))) continue;
        // Resume after the named position serves a late event recorded at or above it.
        if (event.lateAbove !== undefined && compare(event.lateAbove, named) >= 0) continue;
        violations.push({ invariant: 'I4', detail: `consumer ${consumer} connection ${connection.index} was told closing at ${named.epoch}:${named.seq} without ${show(event)} of ${event.source}` });
      }
    }
  }
  return violations;
}

function costViolations(observation: Observation, firstDeliveries: number): Violation[] {
  const { scenario, admitted, usage, gateway } = observation;
  const faultFree = Object.entries(scenario.faults).every(([name, value]) => name === 'windowMs' || value === 0 || value === undefined);
  if (admitted.length === 0) return [];
  const violations: Violation[] = [];
  const subscriptionsOf = () => observation.consumers.reduce((total, consumer) => total + consumer.connections.length, 0);
  if (!faultFree) {
    const bound = COST_BOUNDS.postsPerFirstDeliveryUnderFaults * firstDeliveries + COST_BOUNDS.postsPerSubscription * subscriptionsOf();
    if (gateway.eventPosts > bound) violations.push({ invariant: 'I6', detail: `${gateway.eventPosts} event posts under faults for ${firstDeliveries} first deliveries (bound ${bound})` });
    return violations;
  }
  const eventLog = (by: Map<string, number>) => [...by].filter(([key]) => key.startsWith('events ')).reduce((total, [, units]) => total + units, 0);
  const emitterSessions = new Set(admitted.map((event) => `${event.source}\u0000${event.session}`)).size;
  const subscriptions = subscriptionsOf();
  const writeBound = COST_BOUNDS.eventWriteUnitsPerEvent * admitted.length + COST_BOUNDS.eventWriteUnitsPerBatch * observation.invocations.fanout + COST_BOUNDS.eventWriteUnitsPerEmitterSession * emitterSessions;
  const readBound = COST_BOUNDS.eventReadUnitsPerEvent * admitted.length + COST_BOUNDS.eventReadUnitsPerBatch * observation.invocations.fanout + COST_BOUNDS.eventReadUnitsPerSubscriptionOrEmitter * (subscriptions + emitterSessions);
  const writes = eventLog(usage.writesBy);
  const reads = eventLog(usage.readsBy);
  const at = `${admitted.length} events, ${observation.invocations.fanout} batches, ${emitterSessions} emitter sessions, ${subscriptions} subscriptions`;
  if (writes > writeBound) violations.push({ invariant: 'I6', detail: `${writes} event-log write units for ${at} (bound ${writeBound.toFixed(1)}): ${JSON.stringify([...usage.writesBy])}` });
  if (reads > readBound) violations.push({ invariant: 'I6', detail: `${reads} event-log read units for ${at} (bound ${readBound.toFixed(1)}): ${JSON.stringify([...usage.readsBy])}` });
  const postBound = COST_BOUNDS.postsPerFirstDelivery * firstDeliveries + COST_BOUNDS.postsPerSubscription * subscriptions;
  if (gateway.eventPosts > postBound) violations.push({ invariant: 'I6', detail: `${gateway.eventPosts} event posts for ${firstDeliveries} first deliveries and ${subscriptions} subscriptions (bound ${postBound})` });
  return violations;
}
