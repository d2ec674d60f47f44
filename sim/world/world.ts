/**
 * One schedule of the delivery simulation: the relay's real code (the socket routes, ingest,
 * session order, fan-out, delivery lanes, replay and the replay-to-live handoff, with the real
 * DynamoDB stores) wired to simulated AWS parts, clients playing the scenario, all on virtual
 * time driven by the scenario's seed. Answers what the invariants are checked against.
 */
import { randomBytes } from 'node:crypto';
import type { DynamoDBRecord } from 'aws-lambda';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { FANOUT_LANE_TIMEOUT_SECONDS, FANOUT_TIMEOUT_SECONDS } from '../../src/config/function-timeouts.ts';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import type { RelayConfig } from '../../src/config/relay-config.ts';
import type { Logger } from '../../src/observability/logger.ts';
import { ulidFactory } from '../../src/protocol/ulid.ts';
import { deliverLane } from '../../src/relay/fanout/deliver-lane.ts';
import { fanOut } from '../../src/relay/fanout/fanout.ts';
import { decodeLaneWork } from '../../src/relay/fanout/lane-work.ts';
import type { LaneWork } from '../../src/relay/fanout/lane-work.ts';
import { OrderLane } from '../../src/relay/fanout/order-lane.ts';
import type { DeliveryLanesPort } from '../../src/relay/fanout/delivery-lanes-port.ts';
import { noMetrics } from '../../src/relay/ports/index.ts';
import type { ConnectionPoster } from '../../src/relay/ports/connection-poster.ts';
import type { RelayRuntime } from '../../functions/runtime/relay-runtime.ts';
import { deliverablesOf, sessionActivitiesOf, wakeUpsOf } from '../../src/store/event-stream.ts';
import { DYNAMO_REQUEST_TIMEOUT_MS } from '../../src/store/dynamo-client.ts';
import { eventKeys, sourceDigest } from '../../src/store/keys.ts';
import { decodeOrderState } from '../../src/store/session-order-store.ts';
import { hashTokenSecret } from '../../src/auth/token-secret.ts';
import { TABLE_DEFINITIONS } from '../../src/store/table-definitions.ts';
import { emitterOfKey, positionOfKey } from '../../src/store/position-key.ts';
import { createRuntime } from '../../functions/runtime/create-runtime.ts';
import { routeSocketEvent } from '../../functions/socket/route.ts';
import { passesFanoutFilter } from '../../local/stream-records.ts';
import { Random } from '../kernel/random.ts';
import { VirtualTime } from '../kernel/virtual-time.ts';
import { EventSourceMapping } from '../aws/event-source-mapping.ts';
import { LambdaFunction, guarded } from '../aws/lambda-function.ts';
import { SimulatedDynamo } from '../aws/simulated-dynamo.ts';
import type { DynamoFault, Usage } from '../aws/simulated-dynamo.ts';
import { SimulatedStream } from '../aws/simulated-stream.ts';
import { SimulatedWebSocketGateway } from '../aws/websocket-gateway.ts';
import type { GatewayStats, RouteKey } from '../aws/websocket-gateway.ts';
import { Consumer, Emitter } from './clients.ts';
import type { SentEvent } from './clients.ts';
import type { Scenario } from './scenario.ts';

export const TENANT = 'sim';
/** Virtual ms after the last emitter's last frame and the end of the fault window within which every admitted event must be delivered (docs/protocol-and-guarantees.md, Guarantees: I5). */
export const QUIET_BOUND_MS = 30_000;
/** How long the world runs past the quiet bound, to tell late deliveries (I5) from lost ones (I1, I2). */
const AFTERLIFE_MS = 60_000;

export interface AdmittedEvent extends SentEvent {
  /** Recorded late by the order lane, with the release point it came under. */
  lateAbove?: { epoch: number; seq: number };
}

export interface Observation {
  scenario: Scenario;
  admitted: AdmittedEvent[];
  emitters: Emitter[];
  consumers: Consumer[];
  /** The virtual time the scenario began (its times are relative to this). */
  startedAtMs: number;
  /** When faults and emitters were both done. */
  quietAtMs: number;
  endedAtMs: number;
  usage: Usage;
  gateway: GatewayStats;
  /** Rejections no code handled (each would fail its Lambda invocation). */
  unhandled: string[];
  /** Records the mapping discarded, and why. */
  discarded: Array<{ recordId: string; why: 'retries' | 'age' }>;
  /**
   * Events (`source\u0000id`) the mapping's discards left where nothing brings fan-out back to
   * them (docs/protocol-and-guarantees.md, Guarantees: the documented limit): an event whose own record was discarded with
   * no later position of its emitter's session streamed, and every event of an emitter's session
   * whose wake-up was discarded with no event of it streamed afterwards.
   */
  stranded: Set<string>;
  invocations: { socket: number; fanout: number; lane: number; timeouts: number };
  /** Every hello frame: when the gateway received it and when its handler began (virtual ms). */
  hellos: Array<{ connectionId: string; receivedAtMs: number; startedAtMs: number }>;
  trace: string[];
}

function tracingLogger(note: (line: string) => void, bound: Record<string, unknown> = {}): Logger {
  const line = (level: string) => (message: string, fields?: Record<string, unknown>) => note(`log ${level} ${message} ${JSON.stringify({ ...bound, ...fields }, (_key, value: unknown) => (value instanceof Error ? value.message : value))}`);
  return { debug: () => undefined, info: line('info'), warn: line('warn'), error: line('error'), child: (fields) => tracingLogger(note, { ...bound, ...fields }) };
}

const silent: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => silent };

function relayConfig(): RelayConfig {
  return readRelayConfig({
    AEP_EVENTS_TABLE: 'events',
    AEP_CONNECTIONS_TABLE: 'connections',
    AEP_TENANTS_TABLE: 'tenants',
    // Small lanes, so batches of a few deliveries already run in lanes (and lane faults matter).
    AEP_FANOUT_LANE_DELIVERIES: '4',
    AEP_FANOUT_MAX_LANES: '3',
  });
}

export async function runSchedule(scenario: Scenario, options: { traceAll?: boolean } = {}): Promise<Observation> {
  const random = new Random(scenario.seed);
  const time = new VirtualTime(1_800_000_000_000);
  const trace: string[] = [];
  const note = (line: string) => {
    trace.push(`${String(time.now() - 1_800_000_000_000).padStart(7)} ${line}`);
  };
  const { faults } = scenario;
  const inWindow = () => {
    const at = time.now() - 1_800_000_000_000;
    return at >= faults.windowMs[0] && at < faults.windowMs[1];
  };
  const faultRandom = random.fork();
  let seeding = true;
  const dynamoFault = (): DynamoFault => {
    if (seeding || !inWindow()) return undefined;
    const draw = faultRandom.next();
    if (draw < faults.throttle) return { kind: 'throttle' };
    if (draw < faults.throttle + faults.lostAck) return { kind: 'lost-ack' };
    if (draw < faults.throttle + faults.lostAck + faults.stall) return { kind: 'stall' };
    return undefined;
  };

  let stream: SimulatedStream | undefined;
  /** Each emitter session's streamed events (position, id, when written) and its discarded records. */
  const streamedEvents = new Map<string, Array<{ epoch: number; seq: number; id: string; atMs: number }>>();
  const discardedEvents = new Set<string>();
  const discardedWakes = new Map<string, number>();
  const passedWhenDiscarded = new Set<string>();
  const dynamo = new SimulatedDynamo({
    time,
    random: random.fork(),
    tables: TABLE_DEFINITIONS.map((definition) => ({
      name: definition.id === 'Events' ? 'events' : definition.id === 'Connections' ? 'connections' : 'tenants',
      stream: definition.streamNewImages,
      indexes: definition.globalIndexes.map((index) => ({ name: index.indexName, partitionKey: index.partitionKey.name, sortKey: index.sortKey.name })),
    })),
    faultOf: dynamoFault,
    requestTimeoutMs: DYNAMO_REQUEST_TIMEOUT_MS,
    onChange: (change) => {
      const event = change.newImage?.kind?.S === 'event' ? eventOfImage(change.newImage) : undefined;
      if (event !== undefined && event.seq !== undefined) {
        const key = `${event.source}\u0000${event.session}`;
        streamedEvents.set(key, [...(streamedEvents.get(key) ?? []), { epoch: event.epoch ?? 0, seq: event.seq, id: event.id, atMs: change.atMs }]);
      }
      stream?.add(change);
    },
  });
  stream = new SimulatedStream({ time, random: random.fork(), shards: 2, delayMs: 30, tailMs: 1_500 });

  const config = relayConfig();
  const idRandom = random.fork();
  const mintId = ulidFactory(() => time.now(), (length) => Buffer.from(Array.from({ length }, () => idRandom.int(0, 255))));
  let gateway: SimulatedWebSocketGateway | undefined;
  const makeRuntime = (alive: () => boolean, deliveryLanes?: DeliveryLanesPort): RelayRuntime => {
    const client = { send: guarded(alive, (command: { constructor: { name: string }; input: unknown }) => dynamo.send(command)), destroy: () => undefined } as unknown as DynamoDBClient;
    const poster = gateway?.poster as ConnectionPoster;
    const guardedPoster: ConnectionPoster = { post: guarded(alive, poster.post), close: guarded(alive, poster.close), isOpen: guarded(alive, poster.isOpen) };
    return createRuntime({ config, dynamo: client, poster: guardedPoster, ...(deliveryLanes === undefined ? {} : { deliveryLanes }), metrics: noMetrics, now: () => time.now(), mintId });
  };

  const socketFunction = new LambdaFunction({ name: 'socket', time, random: random.fork(), timeoutMs: 28_000, coldStartMs: 150, init: (alive) => ({ runtime: makeRuntime(alive) }) });
  const laneFunction = new LambdaFunction({ name: 'fanoutlane', time, random: random.fork(), timeoutMs: FANOUT_LANE_TIMEOUT_SECONDS * 1000, coldStartMs: 150, init: (alive) => ({ runtime: makeRuntime(alive) }) });
  const lanes: DeliveryLanesPort = {
    async deliver(work: LaneWork) {
      const outcome = await laneFunction.invoke(({ runtime }) => deliverLane(runtime, silent, decodeLaneWork(JSON.parse(JSON.stringify(work)) as LaneWork)));
      if (outcome.kind === 'error') throw new Error(`lane worker failed${outcome.timedOut ? ' (timed out)' : ''}`);
      return outcome.value;
    },
  };
  const fanoutRandom = random.fork();
  let environments = 0;
  const fanoutFunction = new LambdaFunction<{ runtime: RelayRuntime; lane: OrderLane }>({
    name: 'fanout',
    time,
    random: random.fork(),
    timeoutMs: FANOUT_TIMEOUT_SECONDS * 1000,
    coldStartMs: 200,
    init: (alive) => {
      const runtime = makeRuntime(alive, lanes);
      // A gap check reads one of the emitter's events at a time, so paging past another
      // emitter's events of the same name happens at this scale (deployed: 100).
      const lane = new OrderLane({ order: runtime.sessionOrder, now: runtime.now, waitMs: runtime.config.fanout.orderWaitMs, adoptAfterMs: runtime.config.fanout.orderAdoptMs, gapReadLimit: 1 });
      if (process.env.SIM_DEBUG === '1') {
        const step = lane.step.bind(lane);
        const environment = ++environments;
        lane.step = async (key, records, wake) => {
          const result = await step(key, records, wake);
          note(`order step env ${environment} ${key.session}@${key.source.slice(-10)} records ${records.map((r) => `${r.place.epoch}:${r.place.seq}`).join(',')}${wake === undefined ? '' : ` wake v${wake.version}`} -> through ${result.through === null ? '-' : `${result.through.epoch}:${result.through.seq}`} releases ${result.releases.length}`);
          return result;
        };
      }
      return { runtime, lane };
    },
  });

  const principalContext = { tenant: TENANT, tokenId: 'tok_sim', principalId: 'tok_sim', scopes: 'emit,consume,control' };
  let requests = 0;
  const hellos: Observation['hellos'] = [];
  const route = async (routeKey: RouteKey, connectionId: string, body: string, receivedAtMs: number) => {
    const event = { requestContext: { routeKey, connectionId, requestTimeEpoch: receivedAtMs, authorizer: principalContext } as never, isBase64Encoded: false, ...(routeKey === '$default' ? { body } : {}) };
    if (process.env.SIM_DEBUG === '1') note(`socket ${routeKey} ${connectionId} start ${body.slice(0, 60)}`);
    const outcome = await socketFunction.invoke(({ runtime }) => {
      if (body.startsWith('{"type":"hello"')) hellos.push({ connectionId, receivedAtMs, startedAtMs: time.now() });
      return routeSocketEvent(runtime, process.env.SIM_DEBUG === '1' ? tracingLogger(note) : silent, event, `r${++requests}`);
    });
    if (process.env.SIM_DEBUG === '1') note(`socket ${routeKey} ${connectionId} done ${outcome.kind}`);
    if (outcome.kind === 'error') {
      note(`socket ${routeKey} ${connectionId} failed: ${String((outcome.error as Error)?.message ?? outcome.error)}`);
      return { statusCode: 500 };
    }
    return outcome.value;
  };
  const gatewayRandom = random.fork();
  gateway = new SimulatedWebSocketGateway(time, random.fork(), route, {
    handOffDelay: (text) => (text.startsWith('{"type":"hello"') ? (faults.helloHandOffMs ?? 0) : 0) + (inWindow() && gatewayRandom.chance(faults.lateHandOff) ? gatewayRandom.int(300, 1_500) : 0),
    slowPost: () => (inWindow() && gatewayRandom.chance(faults.slowPost) ? gatewayRandom.int(1_000, 8_000) : 0),
  });

  if (process.env.SIM_DEBUG === '1') gateway.onPost = (connectionId, text, outcome) => note(`post ${connectionId} ${outcome} ${text.slice(0, 70)}`);
  const discarded: Observation['discarded'] = [];
  let stopped = false;
  const mappingRandom = random.fork();
  const mapping = new EventSourceMapping({
    time,
    random: random.fork(),
    stream,
    settings: { batchSize: 100, maxRetries: 5, maxRecordAgeMs: 3_600_000, bisectOnError: true, pollIntervalMs: 250, functionTimeoutMs: FANOUT_TIMEOUT_SECONDS * 1000 },
    filter: passesFanoutFilter,
    faults: {
      duplicateInvocation: () => inWindow() && mappingRandom.chance(faults.duplicateBatch),
      overAge: () => inWindow() && mappingRandom.chance(faults.overAge),
    },
    onDiscard: (entries, why) => {
      for (const { record, writtenAtMs } of entries) {
        discarded.push({ recordId: record.dynamodb?.SequenceNumber ?? '?', why });
        const image = record.dynamodb?.NewImage as Record<string, { S?: string }> | undefined;
        const event = image?.kind?.S === 'event' ? eventOfImage(image) : undefined;
        if (event !== undefined) {
          discardedEvents.add(`${event.source}\u0000${event.id}`);
          // Late by now (its session's release point passed it while it was absent): only its own
          // record could bring it to live subscribers, and that record is gone.
          if (event.seq !== undefined && releasedPastIt(dynamo, event)) passedWhenDiscarded.add(`${event.source}\u0000${event.id}`);
        }
        if (image?.kind?.S === 'order' && image.source?.S !== undefined && image.session?.S !== undefined) {
          const key = `${image.source.S}\u0000${image.session.S}`;
          discardedWakes.set(key, Math.max(discardedWakes.get(key) ?? 0, writtenAtMs));
        }
      }
      note(`mapping discarded ${entries.length} records (${why}): ${entries.map((entry) => describeRecord(entry.record)).join(' ')}`);
    },
    invoke: async (records) => {
      note(`fan-out batch ${records.map(describeRecord).join(' ')}`);
      const outcome = await fanoutFunction.invoke(async ({ runtime, lane }) => {
        const batch = { deliverables: deliverablesOf(records), wakeUps: wakeUpsOf(records), activities: sessionActivitiesOf(records) };
        const report = await fanOut(runtime, silent, batch, lane);
        if (inWindow() && fanoutRandom.chance(faults.fanoutCrash)) throw new Error('fan-out crashed after its work');
        return { batchItemFailures: report.failedRecordIds.map((itemIdentifier) => ({ itemIdentifier })) };
      });
      if (outcome.kind === 'error') {
        note(`fan-out invocation failed: ${outcome.timedOut ? 'timed out' : String((outcome.error as Error)?.message)}`);
        return { kind: 'error' };
      }
      if (outcome.value.batchItemFailures.length > 0) note(`fan-out reported ${outcome.value.batchItemFailures.length} failed records`);
      if (process.env.SIM_DEBUG === '1') note(`fan-out batch done ${records.map(describeRecord).join(' ')}`);
      return { kind: 'returned', response: outcome.value };
    },
    stopped: () => stopped,
  });

  // A rejection nobody handles crashes a Lambda invocation (Runtime.UnhandledPromiseRejection): recorded, and a finding of its own.
  const unhandled: string[] = [];
  const onUnhandled = (reason: unknown) => {
    const text = reason instanceof Error ? `${reason.name}: ${reason.message} ${reason.stack?.split('\n').slice(1, 12).join(' | ') ?? ''}` : String(reason);
    unhandled.push(text);
    note(`unhandled rejection: ${text}`);
  };
  process.on('unhandledRejection', onUnhandled);
  time.install(random.fork());
  try {
    // The tenant and its token, as the admin API would create them.
    const seed = makeRuntime(() => true);
    const seedingDone = (async () => {
      await seed.tenants.createTenant(TENANT);
      await seed.tokens.putToken({ tenant: TENANT, tokenId: 'tok_sim', scopes: ['emit', 'consume', 'control'] }, hashTokenSecret(`aep_${randomBytes(8).toString('hex')}`));
      seeding = false;
    })();
    await time.run(time.now() + 10_000, () => !seeding);
    await seedingDone;
    const startedAt = time.now();
    mapping.start();
    if (scenario.faults.splitAtMs !== undefined) {
      const session = scenario.emitters[0]?.session ?? 's0';
      time.at(scenario.faults.splitAtMs, () => {
        note(`partition split of session ${session}`);
        stream?.split(`T#${TENANT}#S#${session}`);
      });
    }
    const emitters = scenario.emitters.map((plan, index) => new Emitter(index, plan, gateway as SimulatedWebSocketGateway, time, random.fork(), note));
    const consumers = scenario.consumers.map((plan, index) => new Consumer(index, plan, gateway as SimulatedWebSocketGateway, time, random.fork(), note));
    for (const emitter of emitters) void emitter.run();
    for (const consumer of consumers) void consumer.run();
    // Until every emitter has sent its last frame and the fault window is over.
    await time.run(startedAt + 600_000, () => emitters.every((emitter) => emitter.done) && time.now() - startedAt >= faults.windowMs[1]);
    const quietAtMs = time.now() - startedAt + 2_000;
    await time.run(startedAt + quietAtMs + QUIET_BOUND_MS + AFTERLIFE_MS);
    stopped = true;
    const endedAtMs = time.now() - startedAt;
    return {
      scenario,
      admitted: admittedEvents(dynamo),
      emitters,
      consumers,
      startedAtMs: startedAt,
      quietAtMs,
      endedAtMs,
      usage: dynamo.usage,
      gateway: gateway.stats,
      discarded,
      stranded: new Set([...strandedEvents(streamedEvents, discardedEvents, discardedWakes), ...passedWhenDiscarded]),
      unhandled,
      hellos,
      invocations: { socket: socketFunction.invocations, fanout: fanoutFunction.invocations, lane: laneFunction.invocations, timeouts: socketFunction.timeouts + fanoutFunction.timeouts + laneFunction.timeouts },
      trace: options.traceAll === true ? trace : trace,
    };
  } finally {
    time.uninstall();
    process.off('unhandledRejection', onUnhandled);
  }
}

function eventOfImage(image: Record<string, { S?: string }>): { id: string; source: string; session: string; epoch?: number; seq?: number } | undefined {
  const event = JSON.parse(image.raw?.S ?? '{}') as { id?: string; source?: string; session?: string; epoch?: number; seq?: number };
  return event.id === undefined || event.source === undefined || event.session === undefined ? undefined : (event as { id: string; source: string; session: string; epoch?: number; seq?: number });
}

/** Whether the event's emitter's order state has released past its position (`O#` item, its `o` JSON). */
function releasedPastIt(dynamo: SimulatedDynamo, event: { source: string; session: string; epoch?: number; seq?: number }): boolean {
  const digest = sourceDigest(event.source);
  const state = dynamo.itemsOf('events').find((item) => item.sk?.S === `O#${digest}` && item.pk?.S === eventKeys.sessionPartition(TENANT, event.session));
  if (state === undefined || event.seq === undefined) return false;
  const { released } = decodeOrderState(state.o?.S, 0);
  if (released === null) return false;
  const epoch = event.epoch ?? 0;
  return released.epoch > epoch || (released.epoch === epoch && released.seq >= event.seq);
}

function strandedEvents(streamed: Map<string, Array<{ epoch: number; seq: number; id: string; atMs: number }>>, discardedEvents: Set<string>, discardedWakes: Map<string, number>): Set<string> {
  const stranded = new Set<string>();
  for (const [key, events] of streamed) {
    const source = key.slice(0, key.indexOf('\u0000'));
    const kept = events.filter((event) => !discardedEvents.has(`${source}\u0000${event.id}`));
    const wakeLostAt = discardedWakes.get(key);
    for (const event of events) {
      const eventKey = `${source}\u0000${event.id}`;
      const above = kept.some((other) => other.epoch > event.epoch || (other.epoch === event.epoch && other.seq > event.seq));
      if (discardedEvents.has(eventKey) && !above) stranded.add(eventKey);
      if (wakeLostAt !== undefined && !kept.some((other) => other.atMs > wakeLostAt)) stranded.add(eventKey);
    }
  }
  return stranded;
}

function describeRecord(record: DynamoDBRecord): string {
  const image = record.dynamodb?.NewImage as Record<string, { S?: string; N?: string }> | undefined;
  const sk = image?.sk?.S ?? '';
  if (image?.kind?.S === 'order') return `wake(${image.version?.N ?? '?'})`;
  if (sk.startsWith('P#')) {
    const position = positionOfKey('', sk.slice(2));
    return `${position.epoch}:${position.seq}@${(emitterOfKey(sk.slice(2)) ?? '').slice(0, 4)}`;
  }
  return image?.kind?.S ?? '?';
}

/** Every sequenced event the log holds, and which of them the order lane recorded late. */
function admittedEvents(dynamo: SimulatedDynamo): AdmittedEvent[] {
  const items = dynamo.itemsOf('events');
  const lateAbove = new Map<string, { epoch: number; seq: number }>();
  for (const item of items) {
    const sk = item.sk?.S ?? '';
    if (item.kind?.S !== 'late' || !sk.startsWith('L#')) continue;
    // `L#{above}#{position}#{digest}`.
    const rest = sk.slice(2);
    const aboveKey = rest.slice(0, rest.indexOf('#'));
    const eventKey = rest.slice(aboveKey.length + 1);
    const above = positionOfKey('', aboveKey);
    const at = positionOfKey('', eventKey);
    lateAbove.set(`${emitterOfKey(eventKey) ?? ''}:${at.epoch}:${at.seq}`, { epoch: above.epoch, seq: above.seq });
  }
  const admitted: AdmittedEvent[] = [];
  for (const item of items) {
    if (item.kind?.S !== 'event' || !(item.sk?.S ?? '').startsWith('P#')) continue;
    const event = JSON.parse(item.raw?.S ?? '{}') as { id: string; source: string; session: string; epoch?: number; seq: number; severity?: string };
    const epoch = event.epoch ?? 0;
    const late = lateAbove.get(`${sourceDigest(event.source)}:${epoch}:${event.seq}`);
    admitted.push({ id: event.id, source: event.source, session: event.session, epoch, seq: event.seq, severity: event.severity ?? 'info', ...(late === undefined ? {} : { lateAbove: late }) });
  }
  return admitted;
}
