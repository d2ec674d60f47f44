/**
 * How long a live SSE stream waits before its next inbox read. A stream polls its inbox at
 * `AEP_SSE_POLL_MS` while deliveries come; after `AEP_SSE_BACKOFF_AFTER_POLLS` reads in a row
 * that found nothing it doubles the wait each read, up to `AEP_SSE_IDLE_POLL_MS`, and the first
 * read that finds a delivery brings it back to the base. Why: an idle stream (a dashboard on a
 * quiet session) is most of a stream's life, and each read is a billed DynamoDB call; a stream
 * that backs off to 2 s reads 8 times less than one at 250 ms.
 *
 * The price is latency for the first event after a quiet period: it waits for the next read,
 * at most `idlePollMs` after the last one, so at most `idlePollMs - pollMs` longer than at the
 * base rate (1.75 s deployed: 250 ms base, 2 s cap). Events after it come at the base rate.
 * Nothing is lost meanwhile: deliveries wait in the inbox until a read returns them.
 */

export interface PollBackoffSettings {
  /** The wait while deliveries come (`AEP_SSE_POLL_MS`). */
  pollMs: number;
  /** The longest wait, reached on an idle stream (`AEP_SSE_IDLE_POLL_MS`); at or below `pollMs`: no backoff. */
  idlePollMs: number;
  /** Empty reads in a row at the base rate before the wait starts to grow (`AEP_SSE_BACKOFF_AFTER_POLLS`). */
  backoffAfterPolls: number;
}

/** The wait before the next read, after `emptyPolls` reads in a row that found nothing. */
export function pollDelayMs(settings: PollBackoffSettings, emptyPolls: number): number {
  const { pollMs, idlePollMs, backoffAfterPolls } = settings;
  if (idlePollMs <= pollMs || emptyPolls <= backoffAfterPolls) return pollMs;
  // Capped before exponentiation so a stream idle for hours never computes 2^huge.
  const doublings = Math.min(emptyPolls - backoffAfterPolls, 32);
  return Math.min(idlePollMs, pollMs * 2 ** doublings);
}

/** The most the first delivery after a quiet period waits beyond the base rate. */
export function addedLatencyBoundMs(settings: PollBackoffSettings): number {
  return Math.max(0, settings.idlePollMs - settings.pollMs);
}

/** Counts a stream's empty reads and answers the wait before its next read. */
export class PollBackoff {
  private emptyPolls = 0;

  constructor(private readonly settings: PollBackoffSettings) {}

  /** Records what the last read found and answers how long to wait before the next. */
  afterRead(delivered: number): number {
    this.emptyPolls = delivered > 0 ? 0 : this.emptyPolls + 1;
    return pollDelayMs(this.settings, this.emptyPolls);
  }
}

/**
 * The wait before the next read, cut short by the stream's next periodic duty (heartbeat, slot
 * renewal, token revalidation, its end): backing off never makes a heartbeat late or lets a slot
 * lease lapse. `dutiesInMs`: how long until each is due (0 or less: due now).
 */
export function waitBeforeNextRead(pollDelay: number, dutiesInMs: readonly number[]): number {
  return Math.max(0, Math.min(pollDelay, ...dutiesInMs));
}
