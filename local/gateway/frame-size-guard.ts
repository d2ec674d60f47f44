/**
 * A passive tap on a WebSocket connection's raw bytes that reads frame headers (RFC 6455
 * §5.2) and reports the first frame whose payload is over a limit. API Gateway closes a
 * connection with 1009 when one frame exceeds its 32 KB frame quota, even if the message it
 * belongs to is within the 128 KB message quota ("Quotas for configuring and running a
 * WebSocket API in API Gateway"); the `ws` library only limits whole messages (`maxPayload`),
 * so the local gateway needs this to refuse what the cloud refuses.
 *
 * Headers are parsed across chunk boundaries: a header (2 to 14 bytes) can be split between
 * TCP reads, and so can the 16-bit and 64-bit extended lengths.
 */

/** Most header bytes a frame can have: 2 + 8 (64-bit length) + 4 (mask key). */
const MAX_HEADER_BYTES = 14;

/** Reads frame headers from the client-to-server byte stream and skips their payloads. */
export class FrameSizeGuard {
  private readonly header = Buffer.alloc(MAX_HEADER_BYTES);
  private headerBytes = 0;
  private payloadBytesToSkip = 0;
  private tripped = false;

  /** `maxFrameBytes`: the largest payload one frame may carry. */
  constructor(private readonly maxFrameBytes: number) {}

  /**
   * Feeds the next bytes read from the socket. Returns the declared payload length of the
   * first frame over the limit (once), or `undefined` while every frame is within it.
   */
  inspect(chunk: Buffer): number | undefined {
    if (this.tripped) return undefined;
    let offset = 0;
    while (offset < chunk.length) {
      if (this.payloadBytesToSkip > 0) {
        const skipped = Math.min(this.payloadBytesToSkip, chunk.length - offset);
        this.payloadBytesToSkip -= skipped;
        offset += skipped;
        continue;
      }
      this.header[this.headerBytes++] = chunk[offset++] as number;
      const needed = this.headerLength();
      if (needed === undefined || this.headerBytes < needed) continue;
      const payloadLength = this.payloadLength();
      this.headerBytes = 0;
      if (payloadLength > this.maxFrameBytes) {
        this.tripped = true;
        return payloadLength;
      }
      this.payloadBytesToSkip = payloadLength;
    }
    return undefined;
  }

  /** Total header length once the second byte is known; `undefined` before. */
  private headerLength(): number | undefined {
    if (this.headerBytes < 2) return undefined;
    const second = this.header[1] as number;
    const masked = (second & 0x80) !== 0;
    const length7 = second & 0x7f;
    const extended = length7 === 126 ? 2 : length7 === 127 ? 8 : 0;
    return 2 + extended + (masked ? 4 : 0);
  }

  /** Declared payload length of the complete header held in `header`. */
  private payloadLength(): number {
    const length7 = (this.header[1] as number) & 0x7f;
    if (length7 === 126) return this.header.readUInt16BE(2);
    if (length7 === 127) {
      // A 64-bit length can exceed Number's exact range; anything that large is over any limit anyway.
      const length = this.header.readBigUInt64BE(2);
      return length > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(length);
    }
    return length7;
  }
}
