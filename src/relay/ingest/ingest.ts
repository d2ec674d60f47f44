/**
 * `POST /events` as one use case (AEP-0003 §3.2): the checks of the request in the order the
 * binding answers them, then admission of every text, then the append. Every text is
 * admitted first and the batch is refused whole when any is not (the refusal names the first
 * failing line), then events are appended in the order received.
 */
import { hasScope } from '../../auth/principal.ts';
import type { Principal } from '../../auth/principal.ts';
import { RelayError, badRequest, forbidden, invalidEvent, limitExceeded, payloadTooLarge, unavailable, versionUnsupported } from '../../errors/relay-error.ts';
import { SUPPORTED_VERSIONS } from '../../protocol/event.ts';
import { isCommandType } from '../../protocol/type-grammar.ts';
import type { AdmittedEvent, AppendOutcome } from '../domain/index.ts';
import type { RelayPorts } from '../ports/relay-ports.ts';
import type { EventAllowance } from './event-allowance.ts';

/** What ingest uses: the log it appends to, the tenant's quotas and this process's allowance. */
export type IngestDeps = Pick<RelayPorts, 'config' | 'eventLog' | 'metrics' | 'quotas'> & { eventAllowance: EventAllowance };
import { admitEventText } from './admission.ts';
import type { AdmissionLimits } from './admission.ts';
import { decodeCloudEventBody } from './cloudevents-body.ts';
import type { DroppedAttributes } from './cloudevents-body.ts';
import { bodyKindOf, splitBody } from './http-batch.ts';
import { batchLimitOf, checkEventRate } from './quota-checks.ts';

export interface IngestRequest {
  principal: Principal;
  /** The `AEP-Version` header. */
  version: string | undefined;
  /** The `Content-Type` header. */
  contentType: string | undefined;
  /** The request body as text (already decoded from base64 where the gateway encoded it). */
  body: string;
}

export interface IngestResult {
  accepted: number;
  stored: number;
  duplicates: number;
  /** CloudEvents bodies: extension attributes the AEP-0005 §2 inverse dropped, per event (absent when none). */
  dropped?: DroppedAttributes[];
}

/** Admits and stores a POSTed body, or throws the RelayError the binding answers with; counts either per tenant. */
export async function ingest(runtime: IngestDeps, request: IngestRequest): Promise<IngestResult> {
  const { tenant } = request.principal;
  try {
    const result = await ingestBody(runtime, request);
    runtime.metrics.count('EventsAdmitted', tenant, result.accepted);
    return result;
  } catch (error) {
    // One refusal per request: the batch is refused whole (the code is the spec's error code).
    if (error instanceof RelayError) runtime.metrics.count('EventsRefused', tenant, 1, { code: error.code });
    throw error;
  }
}

async function ingestBody(runtime: IngestDeps, request: IngestRequest): Promise<IngestResult> {
  const { principal } = request;
  const { limits } = runtime.config;
  if (!hasScope(principal, 'emit')) throw forbidden('this token lacks the emit scope');
  const version = request.version?.trim();
  if (version === undefined || !(SUPPORTED_VERSIONS as readonly string[]).includes(version)) throw versionUnsupported(SUPPORTED_VERSIONS);
  const kind = bodyKindOf(request.contentType);
  if (kind instanceof RelayError) throw kind;
  const bodyBytes = Buffer.byteLength(request.body, 'utf8');
  if (bodyBytes > limits.maxBodyBytes) throw payloadTooLarge('payload-too-large', `the body is ${bodyBytes} bytes; the limit is ${limits.maxBodyBytes}`);
  if (request.body.trim() === '') throw badRequest('invalid-event', 'the body carries no event');
  const batchLimit = await batchLimitOf(runtime.quotas, principal.tenant, limits.maxBatchEvents);
  let dropped: DroppedAttributes[] = [];
  let texts: string[];
  let mappingRefusal: RelayError | undefined;
  if (kind === 'cloudevent' || kind === 'cloudevent-batch') {
    // CloudEvents are mapped to AEP event texts, which then take exactly the native path.
    const decoded = decodeCloudEventBody(request.body, kind === 'cloudevent-batch', batchLimit);
    if (decoded instanceof RelayError) throw decoded;
    ({ texts, dropped, refusal: mappingRefusal } = decoded);
  } else {
    const split = splitBody(request.body, kind, batchLimit);
    if (split instanceof RelayError) throw split;
    texts = split;
  }
  const admitted = admitBatch(texts, principal, limits);
  // Every event before an unmappable CloudEvent was admitted, so this is the first failing index.
  if (mappingRefusal !== undefined) throw mappingRefusal;
  // The rate first: a batch over it writes nothing.
  const rateRefusal = await checkEventRate(runtime, principal.tenant, admitted.length);
  if (rateRefusal !== undefined) throw limitExceeded(rateRefusal);
  const { stored, duplicates } = await appendAll(runtime.eventLog, principal.tenant, admitted);
  return { accepted: admitted.length, stored, duplicates, ...(dropped.length === 0 ? {} : { dropped }) };
}

/** Admits every text or throws the refusal of the first that fails, naming its index. */
export function admitBatch(texts: readonly string[], principal: Principal, limits: AdmissionLimits): AdmittedEvent[] {
  const admitted: AdmittedEvent[] = [];
  for (const [index, text] of texts.entries()) {
    const where = texts.length > 1 ? `line ${index}: ` : '';
    const admission = admitEventText(text, principal, limits);
    if (!admission.ok) {
      const { refusal } = admission;
      if (refusal.code === 'event-too-large') throw payloadTooLarge('event-too-large', where + refusal.detail);
      if (refusal.code === 'unauthorized') throw forbidden(where + refusal.detail);
      throw invalidEvent(where + refusal.detail, { line: index });
    }
    // Control flows only on the authenticated duplex binding (AEP-0004 §4.1): a command
    // POSTed over HTTP is refused, and nothing of the batch is stored or routed.
    if (isCommandType(admission.admitted.event.type)) {
      throw new RelayError('unauthorized', 403, `${where}control commands are accepted only on the WebSocket binding (AEP-0004 §4.1)`, { line: index });
    }
    admitted.push(admission.admitted);
  }
  return admitted;
}

/** Appends admitted events in order. Storage failures after the SDK's retries answer 503. */
async function appendAll(eventLog: RelayPorts['eventLog'], tenant: string, admitted: readonly AdmittedEvent[]): Promise<{ stored: number; duplicates: number }> {
  const result = { stored: 0, duplicates: 0 };
  for (const [index, event] of admitted.entries()) {
    let outcome: AppendOutcome;
    try {
      outcome = await eventLog.append(tenant, event);
    } catch (error) {
      // Earlier events of the batch stay stored; a retry with the same ids is deduplicated.
      throw unavailable(undefined, error);
    }
    if (outcome === 'conflict') {
      // Never overwritten, never silently dropped: the emitter assigned one position twice.
      const where = admitted.length > 1 ? `line ${index}: ` : '';
      const earlier = index > 0 ? `; the ${index} events before it were stored` : '';
      throw invalidEvent(`${where}${positionTaken(event)}${earlier}`, { line: index });
    }
    if (outcome === 'stored') result.stored += 1;
    else result.duplicates += 1;
  }
  return result;
}

/** The refusal of an event whose position another event already holds (AEP-0001 §7.2). */
export function positionTaken({ event }: AdmittedEvent): string {
  return `position (epoch ${event.epoch ?? 0}, seq ${event.seq ?? '?'}) of session ${JSON.stringify(event.session ?? '')} already holds a different event; one position is never assigned to two events (AEP-0001 §7.2)`;
}
