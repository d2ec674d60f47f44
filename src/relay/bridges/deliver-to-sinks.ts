/**
 * The bridges' consumer of the events table's stream (AEP-0005 §3.5: an ordinary consumer,
 * never inside live fan-out, so a slow collector never delays a dashboard). For each tenant in
 * the batch it sends the new events to every sink the tenant configured, concurrently per sink,
 * each request retried with backoff; what still fails is parked in the tenant's dead-letter
 * store for the admin API to list and redrive.
 *
 * Delivery is at-least-once: a batch that fails before every sink is done (the sink settings
 * or the dead-letter store cannot be reached) is retried whole by the stream mapping, and a
 * sink that already had it receives it again. Receivers dedupe on `(source, id)` (AEP-0001 §7.4).
 */
import { parseStored } from '../delivery-text.ts';
import type { Deliverable } from '../domain/deliverable.ts';
import type { Clock } from '../ports/clock.ts';
import type { BridgeSinksPort, SinkSecrets, StoredSink } from '../ports/bridge-sinks.ts';
import type { DeadLettersPort } from '../ports/dead-letters.ts';
import type { SecretSealer } from '../ports/secret-sealer.ts';
import type { SinkTransport } from '../ports/sink-transport.ts';
import { planSinkRequests } from './sink-requests.ts';
import type { OutboundEvent } from './sink-requests.ts';
import { sendWithRetry } from './send-with-retry.ts';
import type { RetryPolicy } from './send-with-retry.ts';
import { SIGNATURE_HEADER, signatureHeader } from './webhook-signature.ts';

export interface BridgeDeps {
  sinks: BridgeSinksPort;
  sealer: SecretSealer;
  transport: SinkTransport;
  deadLetters: DeadLettersPort;
  now: Clock;
  sleep: (ms: number) => Promise<void>;
  retry: RetryPolicy;
}

export interface SinkDeliveryReport {
  tenant: string;
  sink: string;
  kind: string;
  requests: number;
  delivered: number;
  parked: number;
}

/** Delivers the new events of a stream batch to their tenants' sinks. Throws only when the batch must be retried. */
export async function deliverToBridges(deps: BridgeDeps, deliverables: readonly Deliverable[]): Promise<SinkDeliveryReport[]> {
  const byTenant = new Map<string, OutboundEvent[]>();
  for (const deliverable of deliverables) {
    // A redelivery marker is a duplicate the sinks already had with its first storing.
    if (deliverable.kind !== 'event') continue;
    const events = byTenant.get(deliverable.tenant);
    const outbound = { raw: deliverable.raw, event: deliverable.event };
    if (events === undefined) byTenant.set(deliverable.tenant, [outbound]);
    else events.push(outbound);
  }
  const reports: SinkDeliveryReport[] = [];
  for (const [tenant, events] of byTenant) {
    const sinks = await deps.sinks.getSinks(tenant);
    reports.push(...(await Promise.all(sinks.map((sink) => deliverToSink(deps, tenant, sink, events)))));
  }
  return reports;
}

/** Sends `events` to one sink; parks what fails. Used by live delivery and by redrive. */
export async function deliverToSink(deps: BridgeDeps, tenant: string, sink: StoredSink, events: readonly OutboundEvent[]): Promise<SinkDeliveryReport> {
  const { settings } = sink;
  const report: SinkDeliveryReport = { tenant, sink: settings.name, kind: settings.kind, requests: 0, delivered: 0, parked: 0 };
  const plan = planSinkRequests(settings, events);
  const park = async (undelivered: readonly OutboundEvent[], reason: string) => {
    if (undelivered.length === 0) return;
    await deps.deadLetters.park(tenant, { sink: settings.name, reason, failedAtMs: deps.now(), events: undelivered.map((outbound) => outbound.raw) });
    report.parked += undelivered.length;
  };
  for (const { event, reason } of plan.unsendable) await park([event], reason);
  if (plan.requests.length === 0) return report;

  const secrets = await openSecrets(deps.sealer, tenant, sink);
  const headersFor = (body: string): Record<string, string> => {
    if (secrets.signingSecret !== undefined) return { [SIGNATURE_HEADER]: signatureHeader(secrets.signingSecret, body, deps.now()) };
    return { ...secrets.headers };
  };
  for (const request of plan.requests) {
    const result = await sendWithRetry(request, { transport: deps.transport, retry: deps.retry, sleep: deps.sleep, headersFor });
    report.requests += result.attempts;
    report.delivered += request.events.length - result.undelivered.length;
    await park(result.undelivered, `${result.reason ?? 'not delivered'} (after ${result.attempts} attempts)`);
  }
  return report;
}

async function openSecrets(sealer: SecretSealer, tenant: string, sink: StoredSink): Promise<SinkSecrets> {
  if (sink.sealedSecrets === undefined) return {};
  return JSON.parse(await sealer.open(sink.sealedSecrets, { tenant, sink: sink.settings.name })) as SinkSecrets;
}

/** The stored texts of a dead letter, as outbound events again (unreadable ones are skipped). */
export function outboundOf(raws: readonly string[]): OutboundEvent[] {
  const events: OutboundEvent[] = [];
  for (const raw of raws) {
    const event = parseStored(raw);
    if (event !== undefined) events.push({ raw, event });
  }
  return events;
}
