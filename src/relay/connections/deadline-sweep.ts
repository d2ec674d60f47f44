/**
 * The deadline sweep: one invocation a minute (an EventBridge rule in AWS, an interval on the
 * local stack) reads the deadline index for every deadline due within the horizon
 * (`DEADLINE_HORIZON_MS`) and not yet taken, including overdue ones a failed sweep left,
 * waits for each in turn and closes its connection on time (`closeAtDeadline`). So the work
 * is bounded by the schedule, not by the number of connections: a few sweeps in flight at
 * once (their horizons overlap), each with at most `DEADLINE_CLOSE_CONCURRENCY` closes at a
 * time, where the deadline function once held one execution per connection.
 */
import { closeAtDeadline } from './connection-deadline.ts';
import type { DeadlineOutcome } from './connection-deadline.ts';
import type { ConnectionDeadline } from '../ports/connection-deadlines.ts';
import type { RelayPorts } from '../ports/relay-ports.ts';

/** How far back a sweep looks for deadlines a failed or missed sweep left behind. */
export const DEADLINE_LOOKBACK_MS = 10 * 60_000;

/** Closes one sweep runs at once (each a few DynamoDB calls and a post to `@connections`). */
export const DEADLINE_CLOSE_CONCURRENCY = 16;

export interface SweepOptions {
  /** How far ahead this sweep takes deadlines (its invocation's time, less a margin, caps it). */
  horizonMs: number;
  sleep: (ms: number) => Promise<void>;
  /** Reports a close that failed (the deadline is back in the index for the next sweep). */
  onFailure?: (deadline: ConnectionDeadline, error: unknown) => void;
}

export type SweepOutcome = Record<DeadlineOutcome | 'failed', number>;

export async function sweepDeadlines(runtime: Pick<RelayPorts, 'connections' | 'poster' | 'deadlineIndex' | 'now'>, options: SweepOptions): Promise<SweepOutcome> {
  const startedAt = runtime.now();
  const due = await runtime.deadlineIndex.due(startedAt - DEADLINE_LOOKBACK_MS, startedAt + options.horizonMs);
  const outcome: SweepOutcome = { closed: 0, gone: 0, taken: 0, failed: 0 };
  let next = 0;
  // Workers take deadlines earliest first, each waiting for its own; at most the concurrency at once.
  const worker = async (): Promise<void> => {
    while (next < due.length) {
      const deadline = due[next]!;
      next += 1;
      await options.sleep(deadline.atMs - runtime.now());
      try {
        outcome[await closeAtDeadline(runtime, deadline)] += 1;
      } catch (error) {
        outcome.failed += 1;
        options.onFailure?.(deadline, error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(DEADLINE_CLOSE_CONCURRENCY, due.length) }, worker));
  return outcome;
}
