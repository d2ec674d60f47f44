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
}
