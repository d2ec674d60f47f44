/**
 * Per-stream inboxes that carry fan-out deliveries to SSE streams: a response stream has no
 * address fan-out could post to, so it reads what fan-out left for it.
 */
export interface InboxItem {
  key: string;
  text: string;
}

export interface InboxPort {
  append(tenant: string, streamId: string, text: string): Promise<void>;
  /** A reader that returns each delivery once, in order, across calls. */
  reader(tenant: string, streamId: string, startedAtMs: number): () => Promise<InboxItem[]>;
}
