/**
 * Whether a connection's verified standing holds now: its card has not expired, its operator is
 * still one the tenant trusts, and that operator still holds the key that verified the card.
 * Routing and the roster ask this at every use, so deleting an operator or rotating its keys
 * ends the standing of every connection it verified without touching them: in each process at
 * the latest `STANDING_RECHECK_MS` after the change (a process keeps its last look at an
 * operator's keys that long), or, for keys fetched from a URL, once the process's copy of the
 * key set is refreshed after the URL stops serving the key (`operator-keys.ts`: within the hour).
 */
import { calculateJwkThumbprint } from 'jose';
import { BoundedMap } from '../../protocol/bounded-collections.ts';
import type { Clock } from '../ports/clock.ts';
import type { OperatorsPort } from '../ports/operators.ts';
import type { OperatorKeyCache } from './operator-keys.ts';
import { isVerifiedNow } from '../domain/verified-standing.ts';
import type { VerifiedStanding } from '../domain/verified-standing.ts';

/** How long a process trusts its last look at an operator's keys when judging a standing. */
export const STANDING_RECHECK_MS = 5000;
/** (Tenant, operator) pairs a process remembers; entries live seconds, so this only bounds a burst. */
const MAX_OPERATORS_SEEN = 1000;

export class StandingCheck {
  /** The thumbprints of each operator's current keys (none: not trusted any more), as last looked up. */
  private readonly seen = new BoundedMap<string, { keys: Promise<ReadonlySet<string>>; untilMs: number }>(MAX_OPERATORS_SEEN);

  constructor(private readonly deps: { operators: OperatorsPort; keys: OperatorKeyCache; now: Clock }) {}

  async holds(tenant: string, standing: VerifiedStanding | undefined): Promise<boolean> {
    if (!isVerifiedNow(standing, this.deps.now())) return false;
    return (await this.currentKeys(tenant, standing.operator)).has(standing.key);
  }

  private currentKeys(tenant: string, operator: string): Promise<ReadonlySet<string>> {
    const id = JSON.stringify([tenant, operator]);
    const seen = this.seen.get(id);
    if (seen !== undefined && seen.untilMs > this.deps.now()) return seen.keys;
    const keys = this.lookUp(tenant, operator);
    this.seen.set(id, { keys, untilMs: this.deps.now() + STANDING_RECHECK_MS });
    // A failed read is not remembered: the next use reads again.
    keys.catch(() => this.seen.delete(id));
    return keys;
  }

  private async lookUp(tenant: string, name: string): Promise<ReadonlySet<string>> {
    const operator = await this.deps.operators.getOperator(tenant, name);
    if (operator === undefined) return new Set();
    const keys = await this.deps.keys.keysOf(operator);
    if (!keys.ok) return new Set();
    return new Set(await Promise.all(keys.keySet.keys.map((key) => calculateJwkThumbprint(key))));
  }
}
