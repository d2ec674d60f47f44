/**
 * Connection deadlines kept by this process's own timers: right for a long-lived process (the
 * local stack, where every handler runs in one Node process), wrong for Lambda, whose process
 * freezes between invocations (there `lambda-deadlines.ts` is used).
 */
import type { ConnectionDeadline, ConnectionDeadlinesPort } from '../relay/ports/connection-deadlines.ts';

export function timerDeadlines(onDue: (deadline: ConnectionDeadline) => Promise<unknown>, now: () => number): ConnectionDeadlinesPort {
  return {
    async schedule(deadline) {
      const timer = setTimeout(() => {
        onDue(deadline).catch(() => undefined);
      }, Math.max(0, deadline.atMs - now()));
      // A pending deadline never keeps the process alive on its own.
      timer.unref();
    },
  };
}
