/**
 * Deadlines of open WebSocket connections: a connection whose token expires while it is open
 * is closed at that moment. Nothing in a serverless relay runs at a given time by
 * itself, so whoever holds the clock is an adapter: every deadline goes into the deadline index,
 * which a sweep reads every minute (`deadline-sweep.ts`; an EventBridge rule in AWS, an interval
 * on the local stack), and one nearer than the sweep's horizon also gets an invocation of its
 * own (the `deadline` function in AWS, an in-process timer locally).
 */
export interface ConnectionDeadline {
  tenant: string;
  connectionId: string;
  /** When the connection must end (epoch ms). */
  atMs: number;
  /**
   * `token-expired`: the token's expiry; `card-expired`: the identity card's `valid_until` under a
   * `cardFailure: close` policy; `backpressure`: a consumer fan-out decided to disconnect whose
   * `closing` frame could not be posted (`fanout/connection-delivery.ts`).
   */
  reason: DeadlineReason;
}

export type DeadlineReason = 'token-expired' | 'card-expired' | 'backpressure';

export const DEADLINE_REASONS: readonly DeadlineReason[] = ['token-expired', 'card-expired', 'backpressure'];

export interface ConnectionDeadlinesPort {
  /** Arranges for `reachDeadline` (`relay/connection-deadline.ts`) to run at `deadline.atMs`. */
  schedule(deadline: ConnectionDeadline): Promise<void>;
}
