/**
 * Per-stream inboxes that carry fan-out deliveries to SSE streams: a response stream has no
 * address fan-out could post to, so it reads what fan-out left for it.
 */
export interface InboxItem {
  key: string;
  text: string;
  /** Set on a notice that ends the stream (revocation, tenant disabled): the reason. */
  closing?: string;
}

export interface InboxPort {
  append(tenant: string, streamId: string, text: string): Promise<void>;
  /** Tells a stream to end, with the reason it gives its client. */
  notifyClosing(tenant: string, streamId: string, reason: string): Promise<void>;
  /** A reader that returns each delivery once, in order within a read, across calls, whenever it was committed. */
  reader(tenant: string, streamId: string): () => Promise<InboxItem[]>;
}
