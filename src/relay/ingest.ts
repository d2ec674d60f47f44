/**
 * Ingest of a batch of event texts into the log: every text is admitted first and the batch
 * is refused whole when any is not (AEP-0003 §3.2: reject the batch with the first failing
 * line index), then events are appended in the order received.
 */
import type { Principal } from '../auth/principal.ts';
import { RelayError, forbidden, invalidEvent, payloadTooLarge, unavailable } from '../errors/relay-error.ts';
import { isCommandType } from '../protocol/type-grammar.ts';
import type { AdmittedEvent, AppendOutcome, EventLog } from '../store/event-log.ts';
import { admitEventText } from './admission.ts';
import type { AdmissionLimits } from './admission.ts';

export interface IngestResult {
  stored: number;
  duplicates: number;
}

/** Admits every text or throws the refusal of the first that fails, naming its index. */
export function admitBatch(texts: readonly string[], principal: Principal, limits: AdmissionLimits): AdmittedEvent[] {
  const admitted: AdmittedEvent[] = [];
  for (const [index, text] of texts.entries()) {
    const admission = admitEventText(text, principal, limits);
    if (!admission.ok) {
      const where = texts.length > 1 ? `line ${index}: ` : '';
      const { refusal } = admission;
      if (refusal.code === 'event-too-large') throw payloadTooLarge('event-too-large', where + refusal.detail);
      if (refusal.code === 'unauthorized') throw forbidden(where + refusal.detail);
      throw invalidEvent(where + refusal.detail, { line: index });
    }
    // Control flows only on the authenticated duplex binding (AEP-0004 §4.1): a command
    // POSTed over HTTP is refused, and nothing of the batch is stored or routed.
    if (isCommandType(admission.admitted.event.type)) {
      throw new RelayError('unauthorized', 403, `${texts.length > 1 ? `line ${index}: ` : ''}control commands are accepted only on the WebSocket binding (AEP-0004 §4.1)`, { line: index });
    }
    admitted.push(admission.admitted);
  }
  return admitted;
}

/** Appends admitted events in order. Storage failures after the SDK's retries answer 503. */
export async function appendAll(eventLog: EventLog, tenant: string, admitted: readonly AdmittedEvent[]): Promise<IngestResult> {
  const result: IngestResult = { stored: 0, duplicates: 0 };
  for (const event of admitted) {
    let outcome: AppendOutcome;
    try {
      outcome = await eventLog.append(tenant, event);
    } catch (error) {
      // Earlier events of the batch stay stored; a retry with the same ids is deduplicated.
      throw unavailable(undefined, error);
    }
    if (outcome === 'stored') result.stored += 1;
    else result.duplicates += 1;
  }
  return result;
}
