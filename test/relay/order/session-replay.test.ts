/**
 * What one session's replay serves (`order/session-replay.ts`), over in-memory ports: nothing
 * above each emitter's release point (a seq-less event by the position it arrived after), the
 * late events a resume is owed first, the newest window with where it starts, and a late list
 * cut to the window said as such.
 */
import { describe, expect, it } from 'vitest';
import { replaySession } from '../../../src/relay/subscribe/session-replay.ts';
import type { SessionReplayDeps } from '../../../src/relay/subscribe/session-replay.ts';
import type { Place } from '../../../src/relay/order/emitter-order.ts';
import { sessionEvent } from '../../support/relay-fixtures.ts';

const session = 'replayed';
const A = `aep://a/agent/a/session/${session}`;
const B = `aep://b/agent/b/session/${session}`;
const raw = (source: string, seq: number) => JSON.stringify(sessionEvent(session, seq, { source, id: `${source.slice(6, 7)}${seq}` }));
const label = (text: string) => `${(JSON.parse(text) as { id: string }).id}`;

function deps(items: Array<{ raw: string; anchor: Place | null }>, released: Array<[string, Place]>, late: string[] = [], window = 100): SessionReplayDeps {
  return {
    eventLog: { readWindow: async (_tenant, _session, after, limit) => items.filter((item) => after === undefined || item.anchor === null || item.anchor.seq > after.seq).slice(-limit) },
    sessionOrder: { releasedPoints: async () => new Map(released), lateBelow: async () => late },
    window,
    now: () => 0,
    sleep: async () => undefined,
  };
}

describe('session replay', () => {
  it("serves each emitter's events up to its own release point, and a seq-less event by the position it arrived after", async () => {
    const command = JSON.stringify({ ...sessionEvent(session, 0, { type: 'control.cancel', id: 'cmd' }), seq: undefined });
    const items = [
      { raw: raw(A, 0), anchor: { epoch: 0, seq: 0 } },
      { raw: raw(B, 0), anchor: { epoch: 0, seq: 0 } },
      { raw: raw(A, 1), anchor: { epoch: 0, seq: 1 } },
      { raw: command, anchor: { epoch: 0, seq: 1 } },
      { raw: raw(B, 1), anchor: { epoch: 0, seq: 1 } },
      { raw: raw(A, 2), anchor: { epoch: 0, seq: 2 } },
    ];
    const replay = await replaySession(deps(items, [[A, { epoch: 0, seq: 1 }], [B, { epoch: 0, seq: 0 }]]), 't', session);
    expect(replay.items.map(label)).toEqual(['a0', 'b0', 'a1', 'cmd']);
    expect(replay.released.get(A)).toEqual({ epoch: 0, seq: 1 });
  });

  it('serves the late events owed below the resume position first, then the newest window, saying where it starts', async () => {
    const items = Array.from({ length: 6 }, (_, seq) => ({ raw: raw(A, seq + 10), anchor: { epoch: 0, seq: seq + 10 } }));
    const replay = await replaySession(deps(items, [[A, { epoch: 0, seq: 15 }]], [raw(A, 3)], 4), 't', session, { session, epoch: 0, seq: 9 });
    expect(replay.items.map(label)).toEqual(['a3', 'a12', 'a13', 'a14', 'a15']);
    expect(replay.exhaustedEarliest).toEqual({ session, epoch: 0, seq: 12 });
    expect(replay.lateCut).toBeUndefined();
  });

  it('cuts a late list longer than the window to its newest entries and says so', async () => {
    const late = [1, 2, 3, 4].map((seq) => raw(A, seq));
    const replay = await replaySession(deps([{ raw: raw(A, 9), anchor: { epoch: 0, seq: 9 } }], [[A, { epoch: 0, seq: 9 }]], late, 2), 't', session, { session, epoch: 0, seq: 8 });
    expect(replay.items.map(label)).toEqual(['a3', 'a4', 'a9']);
    expect(replay.lateCut).toBe(true);
  });
});
