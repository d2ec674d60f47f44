/**
 * Writes SSE text to a Lambda response stream and keeps what the serving loop needs to know:
 * whether the client is still there, how much is waiting to be sent (backpressure), and when
 * the last write happened (heartbeats, idle flush padding).
 */
import type { Writable } from 'node:stream';
import { sseComment } from './sse-format.ts';

export class SseWriter {
  private open = true;
  private markClosed!: () => void;
  /** Settles once the stream closed or failed (the client went away, or it was ended). */
  readonly closed = new Promise<void>((resolve) => {
    this.markClosed = resolve;
  });
  private lastWriteAt: number;
  private paddingOwed = false;

  constructor(
    private readonly stream: Writable,
    private readonly now: () => number,
    private readonly flushPaddingBytes: number,
  ) {
    this.lastWriteAt = now();
    stream.on('close', () => {
      this.open = false;
      this.markClosed();
    });
    stream.on('error', () => {
      this.open = false;
      this.markClosed();
    });
  }

  get isOpen(): boolean {
    return this.open && !this.stream.destroyed && !this.stream.writableEnded;
  }

  /** Bytes written but not yet taken by the client. */
  get pendingBytes(): number {
    return this.stream.writableLength;
  }

  get idleMs(): number {
    return this.now() - this.lastWriteAt;
  }

  write(text: string): boolean {
    if (!this.isOpen) return false;
    this.stream.write(text);
    this.lastWriteAt = this.now();
    this.paddingOwed = this.flushPaddingBytes > 0;
    return true;
  }

  /**
   * After a burst, one padding comment pushes the burst through any buffering that holds
   * small writes back (evidence in docs/sse.md "Flushing"). Costs nothing when disabled.
   */
  flushIfIdle(): void {
    if (!this.paddingOwed || !this.isOpen) return;
    this.paddingOwed = false;
    this.stream.write(sseComment('flush' + ' '.repeat(this.flushPaddingBytes)));
  }

  end(finalComment?: string): void {
    if (!this.isOpen) return;
    if (finalComment !== undefined) this.stream.write(sseComment(finalComment));
    this.stream.end();
    this.open = false;
    this.markClosed();
  }
}
