/**
 * `POST /events` bodies in the CloudEvents JSON format (AEP-0005 §2): `application/cloudevents+json`
 * carries one event, `application/cloudevents-batch+json` a JSON array of them. Each is mapped
 * by the §2 inverse into the text of an AEP event, which then goes through exactly the native
 * admission (validation, agent binding, dedupe, refusals).
 */
import { badRequest, invalidEvent, payloadTooLarge } from '../../errors/relay-error.ts';
import type { RelayError } from '../../errors/relay-error.ts';
import { fromCloudEvent } from '../../protocol/bridges/cloudevents.ts';

/** Extension attributes the inverse dropped for one event, reported back (the §2 rule 2 diagnostic). */
export interface DroppedAttributes {
  line: number;
  attributes: string[];
}

export interface CloudEventBody {
  /** The AEP event texts of the events that mapped, in order, up to the first that did not. */
  texts: string[];
  dropped: DroppedAttributes[];
  /** The refusal of the first event that did not map; the texts before it still go through admission first, so the batch is refused at its first failing index either way. */
  refusal?: RelayError;
}

export function decodeCloudEventBody(body: string, batch: boolean, maxBatchEvents: number): CloudEventBody | RelayError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return invalidEvent('not valid JSON (RFC 8259)');
  }
  let items: unknown[];
  if (batch) {
    if (!Array.isArray(parsed)) return invalidEvent('a CloudEvents batch (application/cloudevents-batch+json) is a JSON array of events');
    if (parsed.length === 0) return badRequest('invalid-event', 'the batch carries no event');
    if (parsed.length > maxBatchEvents) return payloadTooLarge('too-many-events', `the batch has ${parsed.length} events; the limit is ${maxBatchEvents}`);
    items = parsed;
  } else {
    items = [parsed];
  }
  const decoded: CloudEventBody = { texts: [], dropped: [] };
  for (const [index, item] of items.entries()) {
    const inverse = fromCloudEvent(item);
    if (!inverse.ok) {
      const where = batch ? `line ${index}: ` : '';
      decoded.refusal = invalidEvent(`${where}${inverse.refusal.rule}: ${inverse.refusal.detail}`, { line: index });
      break;
    }
    if (inverse.dropped.length > 0) decoded.dropped.push({ line: index, attributes: reportable(inverse.dropped) });
    decoded.texts.push(JSON.stringify(inverse.event));
  }
  return decoded;
}

/** Names echoed back are producer-controlled: a few, clipped, so a hostile event cannot amplify the answer. */
function reportable(names: readonly string[]): string[] {
  const shown = names.slice(0, 10).map((name) => (name.length > 40 ? `${name.slice(0, 37)}...` : name));
  return names.length > shown.length ? [...shown, `and ${names.length - shown.length} more`] : shown;
}
