/** What fan-out delivers: one newly stored event (or forwarded duplicate) of one tenant. */
import type { AepEvent } from '../../protocol/event.ts';

export interface Deliverable {
  /** The source record's id, reported back when fan-out could not handle it (so it is retried). */
  recordId: string;
  tenant: string;
  raw: string;
  event: AepEvent;
  /** `redelivery`: a duplicate forwarded live as received (AEP-0003 §5), never skipped. */
  kind: 'event' | 'redelivery';
  /** When the log stored it (ms), when known. */
  storedAtMs?: number;
  /** The emitter connection it came on, for a sequenced event sent over the socket (`StoredAnnotations.via`). */
  via?: string;
  /**
   * Released after its session's release point had passed it (`order/emitter-order.ts`): a
   * consumer holding a higher position may lack it, so it is never skipped as already had.
   */
  late?: true;
}
