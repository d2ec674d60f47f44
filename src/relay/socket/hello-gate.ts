/**
 * Hello-first ordering on a transport that does not keep order (AEP-0003 §3.5.1).
 *
 * API Gateway may invoke `$default` for consecutive frames of one connection concurrently, so
 * a client that pipelines `hello` then `subscribe` can see its `subscribe` handled before its
 * `hello` has been recorded. The mechanism:
 *
 * 1. The hello handler records the hello with API Gateway's receive time of that frame
 *    (`requestTimeEpoch`), sends the relay's hello reply, and only then marks the connection
 *    `open`, so the relay's own first frame is always its hello.
 * 2. Any other frame waits (polling the connection record with consistent reads, bounded by
 *    `helloWaitMs`) until the connection is `open`.
 * 3. If it opens, the frame is honoured unless API Gateway received it strictly before the
 *    hello, in which case the client's real first frame was not a hello: `hello-required`
 *    and close. Frames received in the same millisecond as the hello get the benefit of the
 *    doubt, since nothing finer orders them: a hello-first client is never refused.
 * 4. If no hello is recorded within the bound, the connection is refused (`hello-required`,
 *    then close). The refusal is a conditional state change, so a hello racing it either
 *    wins (and the frame proceeds) or finds the connection refused (and changes nothing).
 *
 * The bound (`helloWaitMs`, default 1750 ms, see `DEFAULT_HELLO_WAIT_MS`) runs from API
 * Gateway's receive time of the waiting frame. A hello-first client's other frames were
 * received no earlier than its hello, so its hello is refused only if its own invocation
 * starts more than the bound after API Gateway received it (a cold start is 0.3 to 1.5 s),
 * while a client that never sends hello hears `hello-required` within 2 s (clients and the
 * protocol's checker wait no longer for the refusal).
 */
import { helloRequired } from '../../errors/relay-error.ts';
import type { ConnectionRecord } from '../domain/connection.ts';
import { refuseConnection } from './socket-refusals.ts';
import type { SocketContext } from './socket-context.ts';

/** The open connection this frame may act on, or undefined when it must be dropped. */
export async function awaitOpenConnection(context: SocketContext): Promise<ConnectionRecord | undefined> {
  const { connections, config, now } = context.runtime;
  const { tenant } = context.principal;
  // Measured from when API Gateway received this frame, not from when this invocation began:
  // a frame whose own invocation started late still gets its answer within the bound.
  const deadline = context.receivedAtMs + config.helloWaitMs;
  const key = `${tenant}\u0000${context.connectionId}`;
  let pauseMs = 5;
  let record = await sharedRead(connections, tenant, context.connectionId, key);
  // Woken in receive order already, with the record another frame read open.
  let inLine = false;
  // Only a frame that waited joins the line: one that finds the connection open goes on at once.
  let waited = false;
  for (;;) {
    if (record === undefined || record.state === 'rejected') return undefined;
    if (record.state === 'open') {
      if (waited && !inLine) record = await inReceiveOrder(connections, key, context.receivedAtMs, record);
      if (record.helloAtMs !== undefined && record.helloAtMs > context.receivedAtMs) {
        await refuse(context, 'the first frame on a connection must be hello (AEP-0003 §3.5.1); a frame arrived before it', ['open']);
        return undefined;
      }
      return record;
    }
    // A hello already recorded ('hello-pending') is being answered: keep waiting for it. If its
    // handler failed between recording and answering, the frame's own budget ends the wait and
    // the frame is refused in-band (`dispatch.ts`, FRAME_BUDGET_MS), never dropped in silence.
    if (record.state === 'connected' && now() >= deadline) {
      if (await refuse(context, 'the first frame on a connection must be hello (AEP-0003 §3.5.1)', ['connected'])) return undefined;
      record = await sharedRead(connections, tenant, context.connectionId, key);
      continue;
    }
    // Never sleep past the deadline: the refusal is due as soon as it passes.
    const untilDeadlineMs = deadline - now();
    const woken = await pauseUnlessOpened(connections, key, context.receivedAtMs, untilDeadlineMs > 0 ? Math.min(pauseMs, untilDeadlineMs) : pauseMs);
    // A short cap: a frame behind a hello goes on within about 20 ms of its answer (the wait is
    // the pipelined burst's first-delivery latency), and the frames of one process share a read.
    pauseMs = Math.min(pauseMs * 2, 20);
    inLine = woken !== undefined;
    waited = true;
    record = woken ?? (await sharedRead(connections, tenant, context.connectionId, key));
  }
}

type Connections = SocketContext['runtime']['connections'];

interface OpenWaiter {
  receivedAtMs: number;
  wake(record: ConnectionRecord): void;
}
interface OpenWaiters {
  /** Frames of one connection paused in this process, or about to go on. */
  frames: OpenWaiter[];
  /** Set once a frame read the connection open: it wakes them all, in receive order. */
  opened?: ConnectionRecord;
}
const openWaiters = new WeakMap<Connections, Map<string, OpenWaiters>>();

/**
 * The frames of one connection that wait in this process go on, once it is open, in the order
 * API Gateway received them. Each would otherwise go on at its own next poll or read, in any
 * order: a burst pipelined behind a hello then reached the store in no order, and its first
 * event, which the session's order waits for, was stored among the last (a fresh session's first
 * delivery came hundreds of milliseconds after a warm one's). In Lambda an instance runs one
 * frame at a time, so this orders nothing there and costs a frame that waited a zero-delay timer.
 */
function waitersOf(connections: Connections, key: string): OpenWaiters {
  const byConnection = ofProcess(openWaiters, connections);
  let waiters = byConnection.get(key);
  if (waiters === undefined) byConnection.set(key, (waiters = { frames: [] }));
  return waiters;
}

function inReceiveOrder(connections: Connections, key: string, receivedAtMs: number, record: ConnectionRecord): Promise<ConnectionRecord> {
  const waiters = waitersOf(connections, key);
  if (waiters.opened === undefined) {
    waiters.opened = record;
    // After every frame that read it open in this turn has joined the line. A timer, not
    // `setImmediate`: the simulation's virtual clock runs timers, so its schedules stay a
    // function of their seed.
    setTimeout(() => {
      openWaiters.get(connections)?.delete(key);
      for (const waiter of waiters.frames.sort((a, b) => a.receivedAtMs - b.receivedAtMs)) waiter.wake(record);
    }, 0);
  }
  return new Promise((resolve) => waiters.frames.push({ receivedAtMs, wake: resolve }));
}

/** Pauses a frame for `ms`, or until another frame of its connection in this process reads it open. */
function pauseUnlessOpened(connections: Connections, key: string, receivedAtMs: number, ms: number): Promise<ConnectionRecord | undefined> {
  const waiters = waitersOf(connections, key);
  return new Promise((resolve) => {
    const waiter: OpenWaiter = {
      receivedAtMs,
      wake: (record) => {
        clearTimeout(timer);
        resolve(record);
      },
    };
    const timer = setTimeout(() => {
      // Read open already, and in line: the line's own timer wakes it.
      if (waiters.opened !== undefined) return;
      const at = waiters.frames.indexOf(waiter);
      if (at >= 0) waiters.frames.splice(at, 1);
      if (waiters.frames.length === 0 && openWaiters.get(connections)?.get(key) === waiters) openWaiters.get(connections)?.delete(key);
      resolve(undefined);
    }, ms);
    waiters.frames.push(waiter);
  });
}

const readsInFlight = new WeakMap<Connections, Map<string, Promise<ConnectionRecord | undefined>>>();

/**
 * The connection record, one read shared by every frame of the connection that asks while it is
 * in flight. A pipelined burst behind a hello would otherwise poll once per frame: 200 frames,
 * hundreds of reads, which on one DynamoDB Local delay the hello itself. A shared answer may be
 * a few milliseconds older than the frame; the gate only ever waits or proceeds on it (a refusal
 * is a conditional write), so older costs at most one more pause. A Lambda instance runs one
 * invocation at a time, so in AWS this shares nothing and costs nothing.
 */
function sharedRead(connections: Connections, tenant: string, connectionId: string, key: string): Promise<ConnectionRecord | undefined> {
  const reads = ofProcess(readsInFlight, connections);
  const pending = reads.get(key);
  if (pending !== undefined) return pending;
  const read = connections.getConnection(tenant, connectionId).finally(() => reads.delete(key));
  reads.set(key, read);
  return read;
}

/** This process's entries of a per-connection registry (`tenant \0 connectionId` keys), for the runtime's port. */
function ofProcess<T>(registry: WeakMap<Connections, Map<string, T>>, connections: Connections): Map<string, T> {
  let entries = registry.get(connections);
  if (entries === undefined) registry.set(connections, (entries = new Map()));
  return entries;
}

/** Refuses the connection if it is still in one of `from`; true when this call refused it. */
function refuse(context: SocketContext, detail: string, from: Array<'connected' | 'open'>): Promise<boolean> {
  return refuseConnection(context, helloRequired(detail), from);
}
