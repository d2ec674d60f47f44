/**
 * A near connection deadline kept by this process's own timer: the local stack's stand-in for
 * the deadline queue that delivers it to the deadline function (`queued-deadlines.ts`), right
 * for a long-lived process (every local handler runs in one Node process), wrong for Lambda,
 * whose process freezes between invocations. The local stack runs the minute sweep beside it, as AWS does.
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
