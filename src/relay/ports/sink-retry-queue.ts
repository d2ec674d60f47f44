/**
 * Wakes the sink-retry worker: SQS in AWS (DelaySeconds for the backoff), an in-process queue
 * locally. A wake-up carries only the letter's coordinates; the letter itself (events, attempts,
 * due time) lives in the dead-letter store, so a lost wake-up loses nothing (a redrive finds
 * the overdue letter) and a duplicate one sends nothing twice (the worker claims the letter).
 */
export interface SinkRetryWakeUp {
  tenant: string;
  letter: string;
  /** Which lane's letter: absent for a bridge sink's, `push` for a Web Push subscription's. */
  lane?: 'push';
}

/** SQS's longest DelaySeconds. */
export const MAX_WAKE_UP_DELAY_SECONDS = 900;

export interface SinkRetryQueuePort {
  /** Delivered at least once, no sooner than `delaySeconds` (whole seconds, at most 900) from now. */
  wake(wakeUps: readonly SinkRetryWakeUp[], delaySeconds: number): Promise<void>;
}
