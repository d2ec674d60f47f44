/** Sends to WebSocket clients (API Gateway's PostToConnection in AWS). */

/** Outcome of one post: `gone` means the connection no longer exists (410). */
export type PostOutcome = 'sent' | 'gone' | 'throttled';

export interface ConnectionPoster {
  post(connectionId: string, text: string): Promise<PostOutcome>;
  /** Closes a connection (its `$disconnect` then runs); a gone connection is not an error. */
  close(connectionId: string): Promise<void>;
}
