/** A tenant's bridge dead letters: what a sink still refused after the retry budget. */
export interface DeadLetter {
  id: string;
  /** The sink's name (redrive sends to its current settings). */
  sink: string;
  reason: string;
  failedAtMs: number;
  /** The stored texts of the events that were not delivered, in stream order. */
  events: string[];
}

export interface DeadLettersPort {
  park(tenant: string, letter: Omit<DeadLetter, 'id'>): Promise<void>;
  /** Oldest first, at most `limit`. */
  list(tenant: string, limit: number): Promise<DeadLetter[]>;
  remove(tenant: string, id: string): Promise<void>;
}
