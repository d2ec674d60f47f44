/**
 * Sends one `control.attention.respond` (AEP-0004 §5) over the relay's WebSocket, the one binding
 * control flows on (§4.1), and follows it as the console does: a consumer hello naming no agent,
 * a live subscription to the session's acks and attention lifecycle made before the command is
 * sent, then the ack (`control.accepted` / `control.rejected`, `cause` = the command id, §3) or
 * the relay's refusal (an `error` frame with that `cause`, §4.2), settled by the console's
 * `CommandBook`; silence past the ack window is `timeout` (§3). After an accept it waits for
 * `attention.resolved` (or `attention.timeout`) naming the request (§6).
 */
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import type { AepObject } from '../../../console/src/attention.ts';
import { CommandBook } from '../../../console/src/commands.ts';
import type { CommandOutcome } from '../../../console/src/commands.ts';
import type { SenderIdentity } from '../../../console/src/sender-identity.ts';
import { RelayError } from '../../../src/errors/relay-error.ts';
import { ulidFactory } from '../../../src/protocol/ulid.ts';
import type { AttentionAnswer } from './attention-arguments.ts';

/** AEP-0004 §3's default ack window, plus the slack the console gives it for the round trip. */
export const ACK_WAIT_MS = 10_000 + 2_000;
/** How long an accepted answer is followed to its `attention.resolved`. */
export const RESOLUTION_WAIT_MS = 10_000;

export interface RespondRequest {
  url: string;
  token: string;
  session: string;
  requestId: string;
  answer: AttentionAnswer;
  sender: SenderIdentity;
}

export interface RespondResult {
  command: AepObject;
  outcome: CommandOutcome;
  /** `attention.answered` naming the request, when it came. */
  answered?: AepObject;
  /** `attention.resolved` or `attention.timeout` naming the request, when it came within the wait. */
  terminal?: AepObject;
}

const mintId = ulidFactory(Date.now, (length) => randomBytes(length));

export async function respondOverSocket(request: RespondRequest): Promise<RespondResult> {
  const socket = new WebSocket(`${request.url.replace(/\/+$/, '').replace(/^http/, 'ws')}/socket`, { headers: { authorization: `Bearer ${request.token}` } });
  const frames = new FrameQueue(socket);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('unexpected-response', (_request, response) => reject(new RelayError('unauthenticated', response.statusCode ?? 401, `the relay refused the WebSocket handshake (HTTP ${response.statusCode ?? '?'})`)));
      socket.once('error', reject);
    });
    socket.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'consumer', capabilities: { filters: ['attr-match'] } }));
    const hello = await frames.next((frame) => frame.type === 'hello' || frame.type === 'error' || frame.type === 'closing', ACK_WAIT_MS);
    if (hello?.type !== 'hello') throw refusal('hello', hello);
    const filter = { session: request.session, type: ['control.accepted', 'control.rejected', 'attention.*'] };
    socket.send(JSON.stringify({ type: 'subscribe', id: 'answer', filter }));
    const subscribed = await frames.next((frame) => frame.id === 'answer' && (frame.type === 'subscribed' || frame.type === 'error'), ACK_WAIT_MS);
    if (subscribed?.type !== 'subscribed') throw refusal('subscribe', subscribed);

    const command: AepObject = {
      aep: '0.1',
      id: mintId(),
      type: 'control.attention.respond',
      time: new Date().toISOString(),
      source: request.sender.source,
      agent: request.sender.agent,
      session: request.session,
      subject: request.requestId,
      cause: request.requestId,
      data: { answer: request.answer },
    };
    const commands = new CommandBook();
    const outcome = commands.sent(command);
    socket.send(JSON.stringify(command));
    const settled = await frames.next((frame) => commands.apply(frame) !== undefined, ACK_WAIT_MS);
    if (settled === undefined) commands.timedOut(outcome.id);
    const result: RespondResult = { command, outcome };
    if (outcome.state !== 'accepted') return result;

    const namesRequest = (frame: AepObject) => frame.subject === request.requestId;
    const terminal = await frames.next((frame) => namesRequest(frame) && (frame.type === 'attention.resolved' || frame.type === 'attention.timeout'), RESOLUTION_WAIT_MS);
    const answered = frames.seen((frame) => namesRequest(frame) && frame.type === 'attention.answered');
    return { ...result, ...(answered === undefined ? {} : { answered }), ...(terminal === undefined ? {} : { terminal }) };
  } finally {
    socket.close();
  }
}

/** The relay's refusal of the hello or the subscription, in the relay's words. */
function refusal(step: string, frame: AepObject | undefined): RelayError {
  if (frame === undefined) return new RelayError('timeout', 504, `the relay did not answer the ${step} within ${ACK_WAIT_MS} ms`);
  const code = typeof frame.code === 'string' ? frame.code : String(frame.reason ?? frame.type);
  return new RelayError(code, 403, `the relay refused the ${step}${typeof frame.detail === 'string' ? `: ${frame.detail}` : ''}`);
}

/** Every frame the socket received, and waiters for the first (already received or future) that matches. */
class FrameQueue {
  private readonly frames: AepObject[] = [];
  private readonly waiters = new Set<(frame: AepObject) => void>();

  constructor(socket: WebSocket) {
    socket.on('message', (data) => {
      let frame: AepObject;
      try {
        frame = JSON.parse(String(data)) as AepObject;
      } catch {
        return;
      }
      this.frames.push(frame);
      for (const waiter of [...this.waiters]) waiter(frame);
    });
  }

  seen(test: (frame: AepObject) => boolean): AepObject | undefined {
    return this.frames.find(test);
  }

  /** The first frame received (already, or within `timeoutMs`) that passes `test`; undefined past it. */
  next(test: (frame: AepObject) => boolean, timeoutMs: number): Promise<AepObject | undefined> {
    const already = this.frames.find(test);
    if (already !== undefined) return Promise.resolve(already);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        resolve(undefined);
      }, timeoutMs);
      const waiter = (frame: AepObject) => {
        if (!test(frame)) return;
        clearTimeout(timer);
        this.waiters.delete(waiter);
        resolve(frame);
      };
      this.waiters.add(waiter);
    });
  }
}
