/**
 * Frames pipelined behind a hello go on, once the connection opens, in the order API Gateway
 * received them (`hello-gate.ts`): a burst's first event reaches the store first, so its session
 * releases it without waiting for the rest of the burst.
 */
import { describe, expect, it } from 'vitest';
import type { ConnectionRecord } from '../../../src/relay/domain/connection.ts';
import { awaitOpenConnection } from '../../../src/relay/socket/hello-gate.ts';
import type { SocketContext } from '../../../src/relay/socket/socket-context.ts';

const principal = { tenant: 't', tokenId: 'tok', scopes: ['emit'] };

function gateWith(record: { current: ConnectionRecord }) {
  const connections = {
    getConnection: async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return { ...record.current };
    },
  };
  const runtime = { connections, config: { helloWaitMs: 10_000 }, now: () => Date.now() };
  return (receivedAtMs: number) => awaitOpenConnection({ runtime, principal, connectionId: 'c1', receivedAtMs, requestId: `r${receivedAtMs}`, logger: console } as unknown as SocketContext);
}

describe('the hello gate', () => {
  it('lets the frames waiting behind a hello go on in the order they were received, not the order they read it open', async () => {
    const received = Date.now();
    const record = { current: { tenant: 't', connectionId: 'c1', principal, state: 'connected', connectedAtMs: received, subscriptionCount: 0 } as ConnectionRecord };
    const gate = gateWith(record);
    const passed: number[] = [];
    // Invocations begin out of receive order, some while others are mid-read or paused.
    const offsets = [7, 2, 9, 0, 5, 1, 8, 3, 6, 4];
    const frames = offsets.map(async (offset, index) => {
      await new Promise((resolve) => setTimeout(resolve, index));
      const open = await gate(received + 10 + offset);
      passed.push(offset);
      return open;
    });
    await new Promise((resolve) => setTimeout(resolve, 25));
    record.current = { ...record.current, state: 'open', helloAtMs: received };
    const opened = await Promise.all(frames);
    expect(opened.every((connection) => connection?.state === 'open')).toBe(true);
    expect(passed).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});
