/**
 * Puts bridge entries on an EventBridge bus (PutEvents) with an injected client: the one
 * boundary the local stack cannot run for real, so tests hand it a client whose endpoint is a
 * local stand-in. A cross-account bus is named by its ARN; the bus's resource policy must let
 * this account put events on it.
 */
import { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { EventBridgeEntry } from '../relay/bridges/sink-requests.ts';
import type { PutEventsOutcome } from '../relay/bridges/sink-transport-port.ts';

/** Error codes of entries that a later attempt can still put. */
const RETRYABLE_ENTRY_ERRORS = new Set(['ThrottlingException', 'InternalException', 'InternalFailure', 'ServiceUnavailable']);

export async function putEvents(client: EventBridgeClient, busArn: string, entries: readonly EventBridgeEntry[], timeoutMs: number): Promise<PutEventsOutcome> {
  let output;
  try {
    output = await client.send(
      new PutEventsCommand({
        Entries: entries.map((entry) => ({ EventBusName: busArn, Source: entry.source, DetailType: entry.detailType, Detail: entry.detail, Time: new Date(entry.time) })),
      }),
      // Abandoned past the attempt's time (an abort has no status: retryable).
      { abortSignal: AbortSignal.timeout(timeoutMs) },
    );
  } catch (error) {
    const name = error instanceof Error ? error.name : 'Error';
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    // Access denied or a missing bus stays so until the settings or the bus policy change.
    const retryable = status === undefined || status >= 500 || status === 429 || name === 'ThrottlingException';
    return { ok: false, retryable, reason: `PutEvents failed: ${name}` };
  }
  if ((output.FailedEntryCount ?? 0) === 0) return { ok: true };
  const failed: number[] = [];
  let permanent: string | undefined;
  (output.Entries ?? []).forEach((result, index) => {
    if (result.ErrorCode === undefined) return;
    if (RETRYABLE_ENTRY_ERRORS.has(result.ErrorCode)) failed.push(index);
    else permanent ??= result.ErrorCode;
  });
  if (permanent !== undefined) return { ok: false, retryable: false, reason: `PutEvents refused an entry: ${permanent}` };
  return { ok: false, retryable: true, reason: `PutEvents failed ${failed.length} of ${entries.length} entries`, failedEntries: failed };
}
