/**
 * Thousands of WebSocket subscribers in a process of their own (started by `fanout-scale.ts`
 * with `fork`), so parsing what they receive does not share a thread with the stack they
 * measure. Commands arrive over IPC; receipt times are epoch milliseconds with sub-ms
 * resolution (`performance.timeOrigin + performance.now()`), comparable across processes.
 */
import WebSocket from 'ws';

export type SubscriberCommand =
  | { cmd: 'open'; baseUrl: string; token: string; session: string; count: number }
  | { cmd: 'collect'; sentAt: Record<string, number>; expected: number; timeoutMs: number }
  | { cmd: 'close' };

export type SubscriberReply =
  | { reply: 'opened'; total: number }
  | { reply: 'collected'; received: number; latenciesMs: number[]; firstAt: number; lastAt: number }
  | { reply: 'error'; message: string };

const sockets: WebSocket[] = [];
/**
 * How often each socket sends a WebSocket ping. The gateway closes a connection that has sent
 * nothing for 10 minutes (API Gateway's idle timeout, which the local gateway keeps, with 1001),
 * and a subscriber only listens: the fan-out scale stage outlasts that, and its first
 * subscribers were closed mid-stage, leaving a run waiting for deliveries to sockets gone.
 * A control-frame ping, not an AEP `ping` frame: these subscribers are the bench's instrument,
 * and an AEP ping is a handler invocation, a DynamoDB read and a `pong` post in the very process
 * the stage times (tried: thousands of sockets opened within seconds pinged in bursts, and the
 * stand-in loop's rate moved by a third with whether a burst fell in its window). The local
 * gateway counts a ping as activity; on AWS a consumer keeps alive with AEP `ping` frames.
 * Each socket's first ping comes at a random point of the period, so they do not bunch.
 */
const KEEPALIVE_MS = 4 * 60 * 1000;
/** Sockets that closed while the stage still counted on them (the reason, for the error). */
const closedEarly: string[] = [];
/** Receipt times of each event id, since the last collect. */
let arrivals = new Map<string, number[]>();
let received = 0;

const nowMs = () => performance.timeOrigin + performance.now();
const send = (reply: SubscriberReply) => process.send?.(reply);

async function openOne(baseUrl: string, token: string, session: string, index: number): Promise<void> {
  const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/socket`, { headers: { authorization: `Bearer ${token}` } });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const subscribed = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`subscriber ${index} got no subscribed`)), 60_000);
    socket.on('message', (data: WebSocket.RawData) => {
      const at = nowMs();
      const frame = JSON.parse(data.toString()) as { type?: string; id?: string; aep?: string };
      if (typeof frame.aep === 'string' && typeof frame.id === 'string') {
        received += 1;
        const list = arrivals.get(frame.id);
        if (list === undefined) arrivals.set(frame.id, [at]);
        else list.push(at);
      } else if (frame.type === 'subscribed') {
        clearTimeout(timer);
        resolve();
      } else if (frame.type === 'error') {
        reject(new Error(`subscriber ${index}: ${JSON.stringify(frame)}`));
      }
    });
  });
  socket.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'consumer', identity: {}, capabilities: {} }));
  socket.send(JSON.stringify({ type: 'subscribe', id: 'scale', filter: { session } }));
  await subscribed;
  sockets.push(socket);
  let keepAlive: NodeJS.Timeout | undefined;
  const firstPing = setTimeout(() => {
    socket.ping();
    keepAlive = setInterval(() => socket.ping(), KEEPALIVE_MS);
    keepAlive.unref();
  }, Math.random() * KEEPALIVE_MS);
  firstPing.unref();
  socket.once('close', (code: number, reason: Buffer) => {
    clearTimeout(firstPing);
    clearInterval(keepAlive);
    closedEarly.push(`subscriber ${index} closed ${code} ${reason.toString('utf8')}`.trim());
  });
}

async function open(command: Extract<SubscriberCommand, { cmd: 'open' }>): Promise<void> {
  const start = sockets.length;
  let next = 0;
  const lanes = Array.from({ length: 16 }, async () => {
    while (next < command.count) {
      const index = start + next;
      next += 1;
      await openOne(command.baseUrl, command.token, command.session, index);
    }
  });
  await Promise.all(lanes);
  send({ reply: 'opened', total: sockets.length });
}

async function collect(command: Extract<SubscriberCommand, { cmd: 'collect' }>): Promise<void> {
  const deadline = Date.now() + command.timeoutMs;
  while (received < command.expected && Date.now() < deadline) {
    // Deliveries to a closed socket never come: say so now rather than at the deadline.
    if (closedEarly.length > 0) throw new Error(`${closedEarly.length} subscribers closed during the stage, first: ${closedEarly[0]}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const latenciesMs: number[] = [];
  let firstAt = Number.POSITIVE_INFINITY;
  let lastAt = 0;
  for (const [id, times] of arrivals) {
    const sentAt = command.sentAt[id];
    if (sentAt === undefined) continue;
    for (const at of times) {
      latenciesMs.push(at - sentAt);
      firstAt = Math.min(firstAt, at);
      lastAt = Math.max(lastAt, at);
    }
  }
  send({ reply: 'collected', received, latenciesMs, firstAt, lastAt });
  arrivals = new Map();
  received = 0;
}

process.on('message', (command: SubscriberCommand) => {
  const run = command.cmd === 'open' ? open(command) : command.cmd === 'collect' ? collect(command) : Promise.resolve(closeAll());
  run.catch((error: unknown) => send({ reply: 'error', message: String(error) }));
});

function closeAll(): void {
  for (const socket of sockets) {
    socket.removeAllListeners('close');
    socket.terminate();
  }
  process.exit(0);
}
