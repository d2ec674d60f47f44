/**
 * Splits a `POST /events` body into event texts (AEP-0003 §3.2): `application/json` carries
 * one event, `application/x-ndjson` one event per line, order preserved.
 */
import { payloadTooLarge, unsupportedMediaType } from '../errors/relay-error.ts';
import type { RelayError } from '../errors/relay-error.ts';

export type BodyKind = 'single' | 'batch';

/** The media type of a Content-Type header, lowercased, without parameters. */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

export function bodyKindOf(contentType: string | undefined): BodyKind | RelayError {
  const mediaType = mediaTypeOf(contentType);
  if (mediaType === 'application/json') return 'single';
  if (mediaType === 'application/x-ndjson') return 'batch';
  return unsupportedMediaType(`POST /events takes application/json (one event) or application/x-ndjson (a batch), not ${JSON.stringify(mediaType)}`);
}

/**
 * The event texts of a body. A trailing newline is allowed; every other line must carry an
 * event (a blank line is reported by admission as an invalid event at its index).
 */
export function splitBody(body: string, kind: BodyKind, maxBatchEvents: number): string[] | RelayError {
  if (kind === 'single') return [body];
  const lines = body.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length > maxBatchEvents) {
    return payloadTooLarge('too-many-events', `the batch has ${lines.length} events; the limit is ${maxBatchEvents}`);
  }
  return lines;
}
