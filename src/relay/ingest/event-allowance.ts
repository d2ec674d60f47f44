/**
 * A tenant's events-per-second quota, enforced without a DynamoDB write per event.
 *
 * The tenant's count for each second is one counter item (`QuotasPort.admitEvents`, a
 * conditional add that never passes `perSecond`), so across every instance of every function
 * the tenant is admitted at most `perSecond` events in any one clock second, exactly. What
 * keeps it cheap: an instance does not add each request's events to the counter, it claims
 * allowance in pieces and spends them from memory. The first claim of a second is the size of
 * what this instance admitted in the second before (a steady sender claims about once a
 * second), each further claim twice the last, never more than a tenth of the quota (so one
 * instance never holds back more than that), and never less than the request needs.
 *
 * What it costs, per tenant and instance: one counter write (1 WRU) in each second the tenant
 * sends anything to that instance, a few more while its rate grows or while the second's
 * quota runs out (claims then halve), about 18 a second when it sends exactly its full quota
 * (0.018 WRU per event at 1,000 events/s, `test/relay/event-allowance.test.ts`), and at most
 * two refused conditional writes a second past the quota (then refusals come from memory). A
 * tenant sending less than one request a second pays one counter write per request.
 *
 * What it may refuse below the quota: allowance another instance claimed and has not spent
 * in that second (at most one claim each, a tenth of the quota).
 */
import type { Clock } from '../ports/clock.ts';
import type { QuotasPort } from '../ports/index.ts';

interface TenantSecond {
  second: number;
  /** Claimed in this second and not yet spent. */
  unspent: number;
  /** Admitted by this instance in this second. */
  spent: number;
  /** The size of this instance's next claim. */
  nextClaim: number;
  /** The counter refused even a claim of exactly what a request needed: refuse from memory until the next second. */
  exhausted: boolean;
}

/** Tenants tracked at once; past it the map starts again (forgetting costs at most one claim each). */
const MAX_TRACKED_TENANTS = 10_000;
/** One claim is at most this fraction of the quota (what an instance may hold unspent). */
const CLAIM_FRACTION = 10;

export class EventAllowance {
  private readonly seconds = new Map<string, TenantSecond>();

  constructor(
    private readonly counter: Pick<QuotasPort, 'admitEvents'>,
    private readonly now: Clock,
  ) {}

  /** Admits `count` events of the tenant against `perSecond`; false when this second's quota cannot hold them. */
  async admit(tenant: string, count: number, perSecond: number): Promise<boolean> {
    if (count > perSecond) return false;
    const current = this.secondOf(tenant, Math.floor(this.now() / 1000));
    if (current.unspent >= count) {
      current.unspent -= count;
      current.spent += count;
      return true;
    }
    if (current.exhausted) return false;
    const largest = Math.max(1, Math.ceil(perSecond / CLAIM_FRACTION));
    // The claim covers this request whole; what is left unspent stays for the next requests.
    const claim = Math.max(count, Math.min(largest, current.nextClaim));
    if (await this.counter.admitEvents(tenant, claim, perSecond, current.second)) {
      current.nextClaim = Math.min(largest, claim * 2);
      return spend(current, claim, count);
    }
    if (claim > count) {
      // The second's quota is nearly spent: claim smaller from now on, and this request exactly.
      current.nextClaim = Math.max(1, Math.floor(claim / 2));
      if (await this.counter.admitEvents(tenant, count, perSecond, current.second)) return spend(current, count, count);
    }
    current.exhausted = true;
    return false;
  }


  private secondOf(tenant: string, second: number): TenantSecond {
    const known = this.seconds.get(tenant);
    if (known !== undefined && known.second === second) return known;
    const spentBefore = known !== undefined && known.second === second - 1 ? known.spent : 0;
    const fresh: TenantSecond = { second, unspent: 0, spent: 0, nextClaim: Math.max(1, spentBefore), exhausted: false };
    if (this.seconds.size >= MAX_TRACKED_TENANTS) this.seconds.clear();
    this.seconds.set(tenant, fresh);
    return fresh;
  }
}

function spend(current: TenantSecond, claimed: number, count: number): true {
  current.unspent += claimed - count;
  current.spent += count;
  return true;
}
