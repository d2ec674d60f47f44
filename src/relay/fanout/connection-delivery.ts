/**
 * Runs one planned action for one connection, and the slow-consumer rule (AEP-0003 §8.4).
 *
 * A consumer that cannot take more (429 after retries) loses `debug`/`info` events; for
 * `notice` and above fan-out disconnects it with a `closing` frame carrying its positions.
 * But a 429 means the gateway's buffer toward that client is already full, so the frame,
 * posted right then, is refused too, and closing at once would end the connection with no
 * frame. So the decision is recorded instead: a closing mark on each of the connection's
 * subscription entries (with the last positions delivered) stops every further delivery to it,
 * and each later batch that reads those entries tries the frame once, without waiting; once
 * it is taken the connection is closed. Past `closingGraceMs` it is closed without the frame
 * (consumers must not depend on it, AEP-0003 §3.5 rule 4). Nothing is ever silently skipped:
 * what the consumer did not get lies after the positions it is told, or it is told nothing and
 * resumes from its own.
 */
import { closing } from '../../protocol/frames.ts';
import type { DeliveredPosition } from '../../protocol/frames.ts';
import { comparePositions, positionOf } from '../../protocol/positions.ts';
import type { Logger } from '../../observability/logger.ts';
import { backpressureAction } from '../domain/backpressure.ts';
import type { PostOutcome } from '../ports/connection-poster.ts';
import type { RelayPorts } from '../ports/relay-ports.ts';
import { isSseStreamId } from '../domain/sse-stream-id.ts';
import type { Deliverable } from '../domain/deliverable.ts';
import type { LaneVerdict } from './delivery-pool.ts';
import type { ConnectionPlan, DeliveryAction, DeliveryTexts } from './delivery-plan.ts';

export interface FanoutCounts {
  posted: number;
  dropped: number;
  /** Consumers fan-out decided to disconnect in this batch. */
  disconnected: number;
  /** Closing frames handed over (now or for a decision of an earlier batch) and closes done. */
  closed: number;
}

type Runtime = Pick<RelayPorts, 'poster' | 'inbox' | 'parking' | 'connections' | 'subscriptions' | 'deadlines' | 'config' | 'now' | 'metrics'>;

/**
 * What one tenant may still deliver in this batch (`fanout.tenantDeliveriesPerBatch`), shared
 * by all of the tenant's connections. Every delivery that writes or posts takes one; a retry of
 * the same post does not (it was counted when first tried).
 */
export class TenantDeliveryBudget {
  constructor(private remaining: number) {}

  take(): boolean {
    if (this.remaining <= 0) return false;
    this.remaining -= 1;
    return true;
  }
}

/** Attempts at a throttled or transient post before the backpressure rule applies (as the poster's own default). */
const POST_ATTEMPTS = 3;
/** The wait before attempt `attempt + 1`, as the poster would sleep it; here the pool waits, off the lane. */
const retryDelayMs = (attempt: number) => 20 * 2 ** attempt + Math.random() * 20;

/** What fan-out knows about one connection during one batch. */
export class ConnectionDelivery {
  /** Last position delivered per subscription in this batch (for a `closing` frame). */
  private readonly delivered = new Map<string, DeliveredPosition>();
  /** Set once a post was throttled: further posts get one attempt, so this lane never waits long. */
  private slow = false;
  private dropLogged = false;
  /**
   * The post being retried and its attempts so far. Fan-out posts with one attempt each and
   * retries through the pool (`{ retryInMs }`), never by sleeping in the lane: the pool ends the
   * wait as soon as nothing else is left to do, so a consumer that stopped reading does not
   * hold the batch (and with it everyone's next batch) for its backoff.
   */
  private retrying: { action: DeliveryAction; text: string; subscriptionIds: string[]; attempts: number } | undefined;

  constructor(
    private readonly runtime: Runtime,
    private readonly logger: Logger,
    private readonly plan: ConnectionPlan,
    private readonly texts: DeliveryTexts,
    private readonly counts: FanoutCounts,
    private readonly budget: TenantDeliveryBudget,
  ) {}

  async run(action: DeliveryAction): Promise<LaneVerdict> {
    if (action.kind === 'retry-closing') return this.retryClosing();
    let text: string;
    let subscriptionIds: string[];
    const retry = this.retrying?.action === action ? this.retrying : undefined;
    this.retrying = undefined;
    if (retry !== undefined) {
      ({ text, subscriptionIds } = retry);
    } else {
      // Past the tenant's share of this batch, the consumer is one fan-out cannot serve now.
      if (!this.budget.take()) return this.overBudget(action);
      let ceiling;
      if (action.kind === 'park') {
        const { deliverable } = action;
        const parked = await this.runtime.parking.parkPending(action.subscription, { raw: deliverable.raw, ...(deliverable.late === true ? { late: true } : {}), ...(deliverable.kind === 'redelivery' ? { redelivery: true } : {}) });
        if (parked === 'parked' || parked === 'gone') return 'next';
        if (parked === 'full') return this.endOverflowingReplay();
        // The replay finished meanwhile: deliver live instead.
        ceiling = action.subscription.ceiling;
        subscriptionIds = [action.subscription.subscriptionId];
      } else {
        ceiling = action.ceiling;
        subscriptionIds = action.subscriptionIds;
      }
      text = this.texts.textOf(action.deliverable, ceiling);
    }
    const { event } = action.deliverable;
    const outcome = await this.send(text);
    if (outcome === 'sent') {
      this.counts.posted += 1;
      this.runtime.metrics.count('Deliveries', this.plan.tenant);
      const position = positionOf(event);
      if (position !== undefined) for (const sub of subscriptionIds) this.delivered.set(sub, { sub, ...position });
      return 'next';
    }
    if (outcome === 'gone') {
      await this.runtime.connections.removeConnection(this.plan.tenant, this.plan.connectionId);
      return 'stop';
    }
    const attempts = (retry?.attempts ?? 0) + 1;
    if (outcome === 'retryable' && !this.slow && attempts < POST_ATTEMPTS) {
      this.retrying = { action, text, subscriptionIds, attempts };
      return { retryInMs: retryDelayMs(attempts) };
    }
    this.slow = true;
    return this.cannotTake(action.deliverable, subscriptionIds, 'disconnecting a consumer that cannot take a notice-or-above event');
  }

  /**
   * The tenant's deliveries of this batch are spent. A replaying subscription cannot have the
   * event parked (that is a write too), so it ends as one whose replay fell behind; a live one
   * follows the slow-consumer rule. Either way the consumer loses nothing it cannot resume.
   */
  private overBudget(action: Exclude<DeliveryAction, { kind: 'retry-closing' }>): Promise<LaneVerdict> {
    this.runtime.metrics.count('FanoutBudgetSheds', this.plan.tenant);
    if (action.kind === 'park') return this.endOverflowingReplay();
    return this.cannotTake(action.deliverable, action.subscriptionIds, "disconnecting a consumer over its tenant's fan-out share of the batch");
  }

  /** AEP-0003 §8.4 for an event this consumer will not get now: drop `debug`/`info`, else disconnect with positions. */
  private async cannotTake(deliverable: Deliverable, subscriptionIds: readonly string[], why: string): Promise<LaneVerdict> {
    const { event } = deliverable;
    if (backpressureAction(event.severity) === 'drop') {
      this.counts.dropped += 1;
      // Once per connection and batch: a flood of drops must not become a flood of log lines
      // (their cost would land on every tenant of the batch). The batch's line counts them all.
      if (!this.dropLogged) this.logger.warn('dropping low-severity events for a consumer that cannot take more', { connectionId: this.plan.connectionId, tenant: this.plan.tenant, type: event.type });
      this.dropLogged = true;
      return 'next';
    }
    // The positions the consumer is told must not lie above this undelivered event (a late one
    // can be below what was delivered before it): those subscriptions are told nothing, and
    // the consumer resumes from its own position, under which resume returns late events.
    const failedAt = positionOf(event);
    if (failedAt !== undefined) {
      for (const sub of subscriptionIds) {
        const at = this.delivered.get(sub);
        if (at !== undefined && at.session === failedAt.session && comparePositions(at, failedAt) >= 0) this.delivered.delete(sub);
      }
    }
    await this.disconnect(why);
    return 'stop';
  }

  /** One attempt; `retryable` is a throttled or transient answer, `throttled` a failure not worth retrying. */
  private async send(text: string): Promise<Exclude<PostOutcome, 'throttled'> | 'retryable' | 'throttled'> {
    const { connectionId, tenant } = this.plan;
    try {
      if (isSseStreamId(connectionId)) {
        // SSE streams have no connection to post to: their deliveries go to the stream's inbox.
        await this.runtime.inbox.append(tenant, connectionId, text);
        return 'sent';
      }
      const outcome = await this.runtime.poster.post(connectionId, text, { attempts: 1 });
      return outcome === 'throttled' ? 'retryable' : outcome;
    } catch (error) {
      this.logger.error('post failed', { connectionId, tenant, error });
      return 'throttled';
    }
  }

  /** The decision (see the file comment): the frame if it fits now, else a mark on every entry. */
  private async disconnect(why: string): Promise<void> {
    const { connectionId, tenant } = this.plan;
    this.counts.disconnected += 1;
    this.runtime.metrics.count('BackpressureDisconnects', tenant);
    this.logger.warn(why, { connectionId, tenant });
    if (isSseStreamId(connectionId)) {
      // A stream has no connection to close: it is told through its inbox and ends itself.
      await this.runtime.inbox.notifyClosing(tenant, connectionId, 'backpressure; reconnect with Last-Event-ID to resume');
      return;
    }
    // The decision is recorded before the frame is tried: a later batch that reads these
    // entries posts nothing more to the connection, and the first decision's positions stand
    // (`markClosing` never overwrites them), so no later batch can name a higher one.
    const sinceMs = this.runtime.now();
    await Promise.all(
      this.plan.entries.map((entry) => {
        const at = this.delivered.get(entry.subscriptionId);
        return this.runtime.subscriptions.markClosing(entry, { sinceMs, ...(at === undefined ? {} : { delivered: { session: at.session, epoch: at.epoch, seq: at.seq } }) });
      }),
    );
    if (await this.tryClosingFrame([...this.delivered.values()])) return;
    // The frame did not fit: a later batch that reads the marks tries again, and if none comes
    // (the session went quiet), the deadline ends the connection after the grace all the same,
    // so a consumer that reads again is never left open and silent.
    await this.runtime.deadlines.schedule({ tenant, connectionId, atMs: sinceMs + this.runtime.config.fanout.closingGraceMs, reason: 'backpressure' });
  }

  /**
   * A subscription still replaying with its parking space full: delivering live now could put an
   * event ahead of replayed ones below it (a consumer dropping then would resume past them), and
   * dropping it would lose it. So the consumer is disconnected, as one that cannot keep up
   * (AEP-0003 §8.4), and resumes from the last position it got.
   */
  private async endOverflowingReplay(): Promise<LaneVerdict> {
    await this.disconnect('disconnecting a consumer whose replay fell too far behind live events');
    return 'stop';
  }

  /** A later batch's attempt at a decision already recorded on this connection's entries. */
  private async retryClosing(): Promise<LaneVerdict> {
    const marks = this.plan.entries.flatMap((entry) => (entry.closing === undefined ? [] : [{ sub: entry.subscriptionId, mark: entry.closing }]));
    const delivered = marks.flatMap(({ sub, mark }) => (mark.delivered === undefined ? [] : [{ sub, ...mark.delivered }]));
    if (await this.tryClosingFrame(delivered)) return 'stop';
    const since = Math.min(...marks.map(({ mark }) => mark.sinceMs));
    if (this.runtime.now() - since >= this.runtime.config.fanout.closingGraceMs) {
      this.logger.warn('closing a slow consumer without its closing frame (grace passed)', { connectionId: this.plan.connectionId, tenant: this.plan.tenant });
      await this.runtime.poster.close(this.plan.connectionId).catch(() => undefined);
      this.counts.closed += 1;
    }
    return 'stop';
  }

  /** Posts the `closing` frame once, without waiting; true when the connection is dealt with. */
  private async tryClosingFrame(delivered: readonly DeliveredPosition[]): Promise<boolean> {
    const { connectionId, tenant } = this.plan;
    const outcome = await this.runtime.poster.post(connectionId, JSON.stringify(closing('backpressure', delivered)), { attempts: 1 }).catch(() => 'throttled' as const);
    if (outcome === 'throttled') return false;
    if (outcome === 'sent') {
      await this.runtime.poster.close(connectionId).catch(() => undefined);
      this.counts.closed += 1;
    } else {
      await this.runtime.connections.removeConnection(tenant, connectionId);
    }
    return true;
  }
}
