/**
 * Per-sink circuits of one bridges process: a sink whose live attempt failed (no answer in
 * the budget, 5xx, 429, unreachable) is *open* for a while, and its requests skip the live
 * attempt and go straight to the retry lane, so a dead sink costs a stream batch nothing. The
 * first batch after the circuit closes again tries it live once more. In memory on purpose: a
 * fresh process (a new Lambda environment) pays at most one budget to find a sink dead.
 */
import type { Clock } from '../ports/clock.ts';

/** Sinks remembered at most; the oldest opening is forgotten first. */
const MAX_OPEN_CIRCUITS = 10_000;

export class SinkCircuits {
  private readonly openUntil = new Map<string, number>();

  constructor(
    private readonly openMs: number,
    private readonly now: Clock,
  ) {}

  isOpen(tenant: string, sink: string): boolean {
    const key = keyOf(tenant, sink);
    const until = this.openUntil.get(key);
    if (until === undefined) return false;
    if (this.now() < until) return true;
    this.openUntil.delete(key);
    return false;
  }

  failed(tenant: string, sink: string): void {
    const key = keyOf(tenant, sink);
    this.openUntil.delete(key);
    if (this.openUntil.size >= MAX_OPEN_CIRCUITS) {
      const oldest = this.openUntil.keys().next().value;
      if (oldest !== undefined) this.openUntil.delete(oldest);
    }
    this.openUntil.set(key, this.now() + this.openMs);
  }

  succeeded(tenant: string, sink: string): void {
    this.openUntil.delete(keyOf(tenant, sink));
  }
}

const keyOf = (tenant: string, sink: string): string => `${tenant}\u0000${sink}`;
