/**
 * Connection deadlines as the deployment keeps them: each goes into the deadline index, where
 * the sweep that runs every minute finds it (`relay/deadline-sweep.ts`); one due within the
 * sweep's horizon, which the sweeps may already have passed, is also handed to `near` (an
 * invocation of its own that waits for it). Whichever comes first closes; the other finds the
 * deadline taken.
 */
import type { Clock } from '../relay/ports/clock.ts';
import type { ConnectionDeadlinesPort } from '../relay/ports/connection-deadlines.ts';
import type { DeadlineIndexPort } from '../relay/ports/deadline-index.ts';

export function sweptDeadlines(options: { index: DeadlineIndexPort; near: ConnectionDeadlinesPort; horizonMs: number; now: Clock }): ConnectionDeadlinesPort {
  return {
    async schedule(deadline) {
      await options.index.add(deadline);
      if (deadline.atMs - options.now() <= options.horizonMs) await options.near.schedule(deadline);
    },
  };
}
