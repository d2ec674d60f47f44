/**
 * Fan-out of a batch of stream records to WebSocket subscribers (AEP-0003 §5, §6, §8.4).
 *
 * Cost shape: subscriptions are read once per batch and tenant: the tenant's unpinned
 * subscriptions plus, for each session in the batch, the subscriptions pinned to it. A
 * subscriber filtered to another session is never read.
 *
 * Order: each connection's deliveries run one after another in stream order (which follows
 * `(epoch, seq)` arrival order per session); connections are served concurrently.
 *
 * Failure isolation: a connection that is gone (410) has its state removed; one that cannot
 * take more (429 after retries) loses `debug`/`info` events and is disconnected with a
 * `closing` frame for anything `notice` and above (never a silent drop). Neither fails the
 * batch. Only a failure to read subscriptions reports records back (`failedRecordIds`, which
 * the handler returns as `batchItemFailures`), so the event source mapping retries them.
 */
import { compileFilter, validateFilter } from '../../protocol/attr-match.ts';
import type { EventMatcher } from '../../protocol/attr-match.ts';
import { closing } from '../../protocol/frames.ts';
import { captureRank } from '../../protocol/levels.ts';
import type { CaptureLevel } from '../../protocol/levels.ts';
import { comparePositions, positionOf } from '../../protocol/positions.ts';
import type { DeliveredPosition } from '../../protocol/frames.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Deliverable } from '../domain/deliverable.ts';
import type { StoredSubscription } from '../domain/subscription.ts';
import { backpressureAction } from '../backpressure.ts';
import { deliveryText } from '../delivery-text.ts';
import type { RelayRuntime } from '../runtime.ts';
import { isSseStreamId } from '../sse/sse-stream-id.ts';

type Action = { kind: 'post'; deliverable: Deliverable; ceiling: CaptureLevel | undefined; subscriptionIds: string[] } | { kind: 'park'; deliverable: Deliverable; subscription: StoredSubscription };

export interface FanoutReport {
  /** Ids of the deliverables to hand back for a retry, every one whose subscriptions could not be read. */
  failedRecordIds: string[];
  posted: number;
  dropped: number;
  disconnected: number;
}

const CONNECTION_CONCURRENCY = 32;

export async function fanOut(runtime: RelayRuntime, logger: Logger, deliverables: readonly Deliverable[]): Promise<FanoutReport> {
  const report: FanoutReport = { failedRecordIds: [], posted: 0, dropped: 0, disconnected: 0 };
  const byTenant = new Map<string, Deliverable[]>();
  for (const deliverable of deliverables) byTenant.set(deliverable.tenant, [...(byTenant.get(deliverable.tenant) ?? []), deliverable]);

  const queues = new Map<string, { tenant: string; actions: Action[] }>();
  const failed: Deliverable[] = [];
  await Promise.all(
    [...byTenant].map(async ([tenant, tenantDeliverables]) => {
      const sessions = [...new Set(tenantDeliverables.flatMap((deliverable) => (deliverable.event.session === undefined ? [] : [deliverable.event.session])))];
      let subscriptions: StoredSubscription[];
      try {
        subscriptions = await runtime.subscriptions.subscriptionsFor(tenant, sessions);
      } catch (error) {
        logger.error('reading subscriptions failed', { tenant, error });
        failed.push(...tenantDeliverables);
        return;
      }
      const matchers = new Map<string, EventMatcher>();
      for (const deliverable of tenantDeliverables) planDeliveries(tenant, deliverable, subscriptions, matchers, queues);
    }),
  );

  const connections = [...queues];
  for (let offset = 0; offset < connections.length; offset += CONNECTION_CONCURRENCY) {
    await Promise.all(connections.slice(offset, offset + CONNECTION_CONCURRENCY).map(([connectionId, queue]) => drain(runtime, logger, connectionId, queue.tenant, queue.actions, report)));
  }
  if (failed.length > 0) {
    // Lambda resumes from the lowest reported sequence number; report every failed record.
    report.failedRecordIds = failed.map((deliverable) => deliverable.recordId);
  }
  return report;
}

/** Decides, per connection, what this event becomes: one post at the most permissive matching ceiling, and parks for replaying subscriptions. */
function planDeliveries(tenant: string, deliverable: Deliverable, subscriptions: readonly StoredSubscription[], matchers: Map<string, EventMatcher>, queues: Map<string, { tenant: string; actions: Action[] }>): void {
  const posts = new Map<string, Extract<Action, { kind: 'post' }>>();
  for (const subscription of subscriptions) {
    const matches = matcherFor(subscription.filter, matchers);
    if (matches === undefined || !matches(deliverable.event)) continue;
    // An event the consumer already has (replayed to it, or before its resume point) that
    // reaches the stream only after the subscription went live is not sent again.
    if (isCovered(deliverable, subscription)) continue;
    const queue = queues.get(subscription.connectionId) ?? { tenant, actions: [] };
    queues.set(subscription.connectionId, queue);
    if (subscription.state === 'replaying') {
      queue.actions.push({ kind: 'park', deliverable, subscription });
      continue;
    }
    const existing = posts.get(subscription.connectionId);
    if (existing === undefined) {
      const post: Extract<Action, { kind: 'post' }> = { kind: 'post', deliverable, ceiling: subscription.ceiling, subscriptionIds: [subscription.subscriptionId] };
      posts.set(subscription.connectionId, post);
      queue.actions.push(post);
    } else {
      existing.ceiling = morePermissive(existing.ceiling, subscription.ceiling);
      existing.subscriptionIds.push(subscription.subscriptionId);
    }
  }
}

function isCovered(deliverable: Deliverable, subscription: StoredSubscription): boolean {
  // Redeliveries always traverse: a re-sent ack is how a lost one is recovered (AEP-0004 §3).
  if (deliverable.kind === 'redelivery') return false;
  const position = positionOf(deliverable.event);
  if (position === undefined) return false;
  const covered = subscription.covered[position.session];
  return covered !== undefined && comparePositions(position, covered) <= 0;
}

function matcherFor(filterText: string, matchers: Map<string, EventMatcher>): EventMatcher | undefined {
  const cached = matchers.get(filterText);
  if (cached !== undefined) return cached;
  let parsed: unknown;
  try {
    parsed = JSON.parse(filterText);
  } catch {
    return undefined;
  }
  const validation = validateFilter(parsed);
  if (!validation.ok) return undefined;
  const matcher = compileFilter(validation.filter);
  matchers.set(filterText, matcher);
  return matcher;
}

/** Absent ceiling means "as stored", the most permissive. */
function morePermissive(left: CaptureLevel | undefined, right: CaptureLevel | undefined): CaptureLevel | undefined {
  if (left === undefined || right === undefined) return undefined;
  return captureRank(left) >= captureRank(right) ? left : right;
}

/** SSE streams have no connection to post to: their deliveries go to the stream's inbox. */
async function deliverToInbox(runtime: RelayRuntime, tenant: string, streamId: string, text: string): Promise<'sent'> {
  await runtime.inbox.append(tenant, streamId, text);
  return 'sent';
}

async function drain(runtime: RelayRuntime, logger: Logger, connectionId: string, tenant: string, actions: readonly Action[], report: FanoutReport): Promise<void> {
  const delivered = new Map<string, DeliveredPosition>();
  for (const action of actions) {
    let ceiling: CaptureLevel | undefined;
    let subscriptionIds: string[];
    if (action.kind === 'park') {
      if (await runtime.parking.parkPending(action.subscription, action.deliverable.raw)) continue;
      // The replay finished meanwhile (or its parking space is full): deliver live instead.
      ceiling = action.subscription.ceiling;
      subscriptionIds = [action.subscription.subscriptionId];
    } else {
      ceiling = action.ceiling;
      subscriptionIds = action.subscriptionIds;
    }
    const { event, raw } = action.deliverable;
    let outcome;
    try {
      const text = deliveryText(raw, event, ceiling);
      outcome = isSseStreamId(connectionId) ? await deliverToInbox(runtime, tenant, connectionId, text) : await runtime.poster.post(connectionId, text);
    } catch (error) {
      logger.error('post failed', { connectionId, tenant, error });
      outcome = 'throttled' as const;
    }
    if (outcome === 'sent') {
      report.posted += 1;
      const position = positionOf(event);
      if (position !== undefined) for (const sub of subscriptionIds) delivered.set(sub, { sub, ...position });
      continue;
    }
    if (outcome === 'gone') {
      await runtime.connections.removeConnection(tenant, connectionId);
      return;
    }
    // Backpressure (AEP-0003 §8.4): debug/info may be dropped; notice and above: deliver or disconnect.
    if (backpressureAction(event.severity) === 'drop') {
      report.dropped += 1;
      logger.warn('dropped low-severity event for a slow consumer', { connectionId, tenant, type: event.type });
      continue;
    }
    report.disconnected += 1;
    logger.warn('disconnecting a consumer that cannot take a notice-or-above event', { connectionId, tenant, type: event.type });
    await runtime.poster.post(connectionId, JSON.stringify(closing('backpressure', [...delivered.values()]))).catch(() => undefined);
    await runtime.poster.close(connectionId).catch(() => undefined);
    return;
  }
}
