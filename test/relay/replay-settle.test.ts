/**
 * A replay that left events out for fan-out (`ReplayResult.pendingThrough`) waits, within its
 * bound, for the session's top to reach them and reads again once: pure logic over an in-memory
 * event log and a fake clock.
 */
import { describe, expect, it } from 'vitest';
import { compileFilter } from '../../src/protocol/attr-match.ts';
import type { ReplayResult } from '../../src/relay/domain/stored-event.ts';
import type { EventLogPort } from '../../src/relay/ports/event-log.ts';
import { replaySteps } from '../../src/relay/replay-plan.ts';
import type { ReplayStep } from '../../src/relay/replay-plan.ts';
import { sessionEvent } from '../support/relay-fixtures.ts';

const session = 'settle';
const item = (seq: number) => ({ raw: JSON.stringify(sessionEvent(session, seq)), positionKey: `k${seq}` });

/** A log whose top moves to `k3` after `topAfterPolls` reads of it; replay serves what is at or below the top. */
function logWithTop(topAfterPolls: number) {
  let topPolls = 0;
  let replays = 0;
  const top = () => (topPolls >= topAfterPolls ? 'k3' : 'k1');
  const eventLog = {
    replay: async (): Promise<ReplayResult> => {
      replays += 1;
      const all = [0, 1, 2, 3].map(item);
      const served = all.filter((candidate) => candidate.positionKey <= top());
      return served.length < all.length ? { items: served, pendingThrough: 'k3' } : { items: served };
    },
    sessionTop: async () => {
      topPolls += 1;
      return top();
    },
  } as unknown as EventLogPort;
  return { eventLog, counts: () => ({ topPolls, replays }) };
}

async function run(eventLog: EventLogPort, waitMs: number): Promise<{ seqs: number[]; elapsedMs: number }> {
  let clock = 0;
  const steps: ReplayStep[] = [];
  const request = {
    tenant: 't',
    from: [{ session, epoch: 0, seq: -1 }],
    matches: compileFilter({}),
    settle: { waitMs, now: () => clock, sleep: async (ms: number) => void (clock += ms) },
  };
  for await (const step of replaySteps(eventLog, request)) steps.push(step);
  return { seqs: steps.flatMap((step) => (step.kind === 'event' && step.position !== undefined ? [step.position.seq] : [])), elapsedMs: clock };
}

describe('replay settle', () => {
  it('waits for the top to reach what it left out, then reads again once', async () => {
    const { eventLog, counts } = logWithTop(3);
    const { seqs, elapsedMs } = await run(eventLog, 2000);
    expect(seqs).toEqual([0, 1, 2, 3]);
    expect(counts()).toEqual({ topPolls: 3, replays: 2 });
    expect(elapsedMs).toBe(150);
  });

  it('goes without them once its bound has passed (they come live, or on the next read)', async () => {
    const { eventLog, counts } = logWithTop(1000);
    const { seqs, elapsedMs } = await run(eventLog, 200);
    expect(seqs).toEqual([0, 1]);
    expect(counts().replays).toBe(1);
    expect(elapsedMs).toBe(200);
  });
});
