/**
 * Redeliveries of positions fan-out has not finished with are held back (their original's own
 * record delivers them); the rest go out as received. Pure logic over an in-memory top.
 */
import { describe, expect, it } from 'vitest';
import type { AepEvent } from '../../src/protocol/event.ts';
import type { Deliverable } from '../../src/relay/domain/deliverable.ts';
import { forwardable } from '../../src/relay/fanout/redelivery-gate.ts';
import { sessionEvent } from '../support/relay-fixtures.ts';

function deliverable(kind: Deliverable['kind'], session: string, seq: number | undefined): Deliverable {
  const event = sessionEvent(session, seq ?? 0);
  if (seq === undefined) delete event.seq;
  return { recordId: `${kind}-${session}-${seq}`, tenant: 't', raw: JSON.stringify(event), event: event as unknown as AepEvent, kind };
}

describe('redelivery gate', () => {
  it('holds back redeliveries above their session top and forwards everything else', async () => {
    const tops: Record<string, number> = { a: 4, b: -1 };
    const reads: string[] = [];
    const eventLog = {
      finishedWith: async (_tenant: string, session: string) => {
        reads.push(session);
        return (position: { seq: number }) => position.seq <= (tops[session] ?? -1);
      },
    };
    const batch = [
      deliverable('event', 'a', 7),
      deliverable('redelivery', 'a', 4),
      deliverable('redelivery', 'a', 6),
      deliverable('redelivery', 'b', 0),
      // A command (no position) is forwarded as received.
      deliverable('redelivery', 'b', undefined),
    ];
    const kept = await forwardable(eventLog, 't', batch);
    expect(kept.map((entry) => entry.recordId)).toEqual(['event-a-7', 'redelivery-a-4', 'redelivery-b-undefined']);
    // One top read per session holding a positioned redelivery.
    expect(reads.sort()).toEqual(['a', 'b']);
  });
});
