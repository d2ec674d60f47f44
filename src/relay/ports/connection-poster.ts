/** Sends to WebSocket clients (API Gateway's PostToConnection in AWS). */

/** Outcome of one post: `gone` means the connection no longer exists (410). */
export type PostOutcome = 'sent' | 'gone' | 'throttled';

export interface PostOptions {
  /**
   * Attempts at a throttled (429) or transient answer before reporting `throttled`. Fan-out
   * asks for one and retries through its pool, so a backoff never holds up a batch.
   */
  attempts?: number;
}

export interface ConnectionPoster {
  post(connectionId: string, text: string, options?: PostOptions): Promise<PostOutcome>;
  /** Closes a connection (its `$disconnect` then runs); a gone connection is not an error. */
  close(connectionId: string): Promise<void>;
  /** Whether the gateway still holds the connection (GetConnection; 410 means it does not). */
  isOpen(connectionId: string): Promise<boolean>;
}
