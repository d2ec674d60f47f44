/**
 * The fan-out scheduler: many connections served at once, each connection's deliveries one
 * after another in the order given (stream order, which follows `(epoch, seq)` arrival order
 * per session).
 *
 * No head-of-line blocking: a lane runs ONE action of a connection and puts the connection back
 * at the end of the ready queue, so a connection whose posts are slow (retries, a consumer that
 * stopped reading) holds at most one lane at a time, never a chunk of others waiting for it.
 * Taking connections round-robin also makes progress record-major: every connection gets the
 * first event before any gets the third, which keeps the spread of delivery latency small.
 *
 * Retries wait off the lane: an action answered `{ retryInMs }` runs again after that wait
 * (the connection's later actions still behind it), but the wait ends early once nothing else
 * is running or ready. A batch ends only when every connection is done, and the stream's next
 * batch waits for it, so a retry's backoff must never be time during which the batch waits for
 * one connection alone (a consumer that stopped reading would delay everyone's next events).
 */

/** What an action's runner says about the connection's remaining actions: go on, drop them, or run this one again later. */
export type LaneVerdict = 'next' | 'stop' | { retryInMs: number };

export interface PoolSettings {
  /** Actions in flight at once, over all connections (at least 1). */
  concurrency: number;
}

/**
 * Runs every queue's actions in order, at most `concurrency` at a time in all. `run` answering
 * `stop` drops the rest of that connection's queue (it is gone, or being disconnected). Resolves
 * once every queue is done; a `run` that throws rejects the whole pool, as a bug should.
 */
export function runPool<A>(queues: ReadonlyMap<string, readonly A[]>, settings: PoolSettings, run: (key: string, action: A) => Promise<LaneVerdict>): Promise<void> {
  const concurrency = Math.max(1, Math.floor(settings.concurrency));
  const cursors = new Map<string, number>();
  const ready: string[] = [];
  for (const [key, actions] of queues) {
    if (actions.length === 0) continue;
    cursors.set(key, 0);
    ready.push(key);
  }
  let head = 0;
  let active = 0;
  /** Connections whose current action waits to be retried, and the timer that will requeue it. */
  const waiting = new Map<string, ReturnType<typeof setTimeout>>();
  return new Promise<void>((resolve, reject) => {
    let failed = false;
    const requeue = (key: string): void => {
      clearTimeout(waiting.get(key));
      waiting.delete(key);
      ready.push(key);
    };
    const pump = (): void => {
      while (!failed && active < concurrency && head < ready.length) {
        const key = ready[head] as string;
        head += 1;
        const actions = queues.get(key) as readonly A[];
        const index = cursors.get(key) as number;
        active += 1;
        run(key, actions[index] as A).then(
          (verdict) => {
            active -= 1;
            if (typeof verdict === 'object') {
              waiting.set(
                key,
                setTimeout(() => {
                  if (!waiting.has(key) || failed) return;
                  requeue(key);
                  pump();
                }, verdict.retryInMs),
              );
            } else if (verdict === 'next' && index + 1 < actions.length) {
              cursors.set(key, index + 1);
              ready.push(key);
            }
            // Keep the ready queue from growing without bound: drop what was consumed.
            if (head > 1024 && head * 2 > ready.length) {
              ready.splice(0, head);
              head = 0;
            }
            pump();
          },
          (error: unknown) => {
            failed = true;
            for (const timer of waiting.values()) clearTimeout(timer);
            reject(error);
          },
        );
      }
      if (failed || active > 0 || head < ready.length) return;
      // Nothing runs and nothing is ready: the waits would hold the batch for their connections
      // alone, so they end now.
      if (waiting.size > 0) {
        for (const key of [...waiting.keys()]) requeue(key);
        pump();
        return;
      }
      resolve();
    };
    pump();
  });
}
