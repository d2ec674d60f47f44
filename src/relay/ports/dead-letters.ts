/**
 * A tenant's bridge letters: what a sink has not accepted yet. A *retry letter* (`dueAtMs`
 * set) waits for the sink-retry worker's next attempt; a *dead letter* (no `dueAtMs`) is what
 * a sink still refused after every attempt, kept for the admin API to list and redrive.
 */
export interface DeadLetter {
  id: string;
  /** The sink's name (each attempt sends to its current settings). */
  sink: string;
  reason: string;
  failedAtMs: number;
  /** The stored texts of the events that were not delivered, in stream order. */
  events: string[];
  /** Attempts made so far (the live one included). */
  attempts: number;
  /** When the next attempt is due; absent on a dead letter. */
  dueAtMs?: number;
}

/** What a retry attempt leaves behind in the letter. */
export interface LetterOutcome {
  events: string[];
  reason: string;
  attempts: number;
  failedAtMs: number;
}

export interface DeadLettersPort {
  /** Stores a letter (split when too large for one item); returns the ids it was stored under. */
  park(tenant: string, letter: Omit<DeadLetter, 'id'>): Promise<string[]>;
  /** Dead letters (never retry letters), oldest first, at most `limit`. */
  list(tenant: string, limit: number): Promise<DeadLetter[]>;
  /**
   * Letters a redrive may schedule, oldest first: dead letters, and retry letters overdue
   * since before `overdueBeforeMs` (their wake-up was lost or their attempt crashed).
   */
  listRedrivable(tenant: string, limit: number, overdueBeforeMs: number): Promise<DeadLetter[]>;
  /**
   * Takes a due retry letter for one attempt: only when it is due at `nowMs`, and then it is
   * not due again before `leaseUntilMs`, so a duplicate wake-up does not send it twice.
   */
  claim(tenant: string, id: string, nowMs: number, leaseUntilMs: number): Promise<DeadLetter | undefined>;
  /** A retry letter's attempt failed: what is left, and when to try again. */
  reschedule(tenant: string, id: string, outcome: LetterOutcome, dueAtMs: number): Promise<void>;
  /** A retry letter's attempts are spent: it becomes a dead letter. */
  bury(tenant: string, id: string, outcome: LetterOutcome): Promise<void>;
  /** A redrive: the letter becomes a retry letter again with a fresh budget, when it is still redrivable. */
  scheduleRedrive(tenant: string, id: string, dueAtMs: number, overdueBeforeMs: number): Promise<boolean>;
  remove(tenant: string, id: string): Promise<void>;
}
