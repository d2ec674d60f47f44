/**
 * Splits a `POST /events` body into event texts (AEP-0003 §3.2): `application/json` carries
 * one event, `application/x-ndjson` one event per line, order preserved. The CloudEvents JSON
 * media types (AEP-0005 §2) are decoded by `cloudevents-body.ts`.
 */
import { payloadTooLarge, unsupportedMediaType } from '../../errors/relay-error.ts';
import type { RelayError } from '../../errors/relay-error.ts';
import { CLOUDEVENTS_BATCH_JSON, CLOUDEVENTS_JSON } from '../../protocol/bridges/cloudevents.ts';

export type BodyKind = 'single' | 'batch' | 'cloudevent' | 'cloudevent-batch';

/** The media type of a Content-Type header, lowercased, without parameters. */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

export function bodyKindOf(contentType: string | undefined): BodyKind | RelayError {
  const mediaType = mediaTypeOf(contentType);
  if (mediaType === 'application/json') return 'single';
  if (mediaType === 'application/x-ndjson') return 'batch';
  if (mediaType === CLOUDEVENTS_JSON) return 'cloudevent';
  if (mediaType === CLOUDEVENTS_BATCH_JSON) return 'cloudevent-batch';
  return unsupportedMediaType(
    `POST /events takes application/json (one event), application/x-ndjson (a batch), ${CLOUDEVENTS_JSON} or ${CLOUDEVENTS_BATCH_JSON} (CloudEvents, AEP-0005 §2), not ${JSON.stringify(mediaType)}`,
  );
}

/**
 * The event texts of a body. A trailing newline is allowed; every other line must carry an
 * event (a blank line is reported by admission as an invalid event at its index).
 */
export function splitBody(body: string, kind: 'single' | 'batch', maxBatchEvents: number): string[] | RelayError {
  if (kind === 'single') return [body];
  const lines = body.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length > maxBatchEvents) {
    return payloadTooLarge('too-many-events', `the batch has ${lines.length} events; the limit is ${maxBatchEvents}`);
  }
  return lines;
}
