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
  let pauseMs = 5;
  for (;;) {
    const record = await sharedRead(connections, tenant, context.connectionId);
    if (record === undefined || record.state === 'rejected') return undefined;
    if (record.state === 'open') {
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
      continue;
    }
    // Never sleep past the deadline: the refusal is due as soon as it passes.
    const untilDeadlineMs = deadline - now();
    await new Promise((resolve) => setTimeout(resolve, untilDeadlineMs > 0 ? Math.min(pauseMs, untilDeadlineMs) : pauseMs));
    // A short cap: a frame behind a hello goes on within about 20 ms of its answer (the wait is
    // the pipelined burst's first-delivery latency), and the frames of one process share a read.
    pauseMs = Math.min(pauseMs * 2, 20);
  }
}

type Connections = SocketContext['runtime']['connections'];
const readsInFlight = new WeakMap<Connections, Map<string, Promise<ConnectionRecord | undefined>>>();

/**
 * The connection record, one read shared by every frame of the connection that asks while it is
 * in flight. A pipelined burst behind a hello would otherwise poll once per frame: 200 frames,
 * hundreds of reads, which on one DynamoDB Local delay the hello itself. A shared answer may be
 * a few milliseconds older than the frame; the gate only ever waits or proceeds on it (a refusal
 * is a conditional write), so older costs at most one more pause. A Lambda instance runs one
 * invocation at a time, so in AWS this shares nothing and costs nothing.
 */
function sharedRead(connections: Connections, tenant: string, connectionId: string): Promise<ConnectionRecord | undefined> {
  let reads = readsInFlight.get(connections);
  if (reads === undefined) {
    reads = new Map();
    readsInFlight.set(connections, reads);
  }
  const key = `${tenant}\u0000${connectionId}`;
  const pending = reads.get(key);
  if (pending !== undefined) return pending;
  const read = connections.getConnection(tenant, connectionId).finally(() => reads.delete(key));
  reads.set(key, read);
  return read;
}

/** Refuses the connection if it is still in one of `from`; true when this call refused it. */
function refuse(context: SocketContext, detail: string, from: Array<'connected' | 'open'>): Promise<boolean> {
  return refuseConnection(context, helloRequired(detail), from);
}
