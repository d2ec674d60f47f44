import { describe, expect, it } from 'vitest';
import { FrameSizeGuard } from '../../local/gateway/frame-size-guard.ts';

/** A client-to-server frame (masked, as RFC 6455 requires of clients) with a `length`-byte payload. */
function frame(length: number, options: { fin?: boolean; opcode?: number; masked?: boolean } = {}): Buffer {
  const first = ((options.fin ?? true) ? 0x80 : 0) | (options.opcode ?? 0x1);
  const maskBit = (options.masked ?? true) ? 0x80 : 0;
  let header: Buffer;
  if (length < 126) {
    header = Buffer.from([first, maskBit | length]);
  } else if (length < 65536) {
    header = Buffer.alloc(4);
    header[0] = first;
    header[1] = maskBit | 126;
    header.writeUInt16BE(length, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = first;
    header[1] = maskBit | 127;
    header.writeBigUInt64BE(BigInt(length), 2);
  }
  const mask = (options.masked ?? true) ? Buffer.from([1, 2, 3, 4]) : Buffer.alloc(0);
  return Buffer.concat([header, mask, Buffer.alloc(length, 0x61)]);
}

/** Feeds `bytes` in pieces of `size` bytes and returns the first verdict. */
function feed(guard: FrameSizeGuard, bytes: Buffer, size: number): number | undefined {
  for (let offset = 0; offset < bytes.length; offset += size) {
    const verdict = guard.inspect(bytes.subarray(offset, offset + size));
    if (verdict !== undefined) return verdict;
  }
  return undefined;
}

const LIMIT = 32 * 1024;

describe('FrameSizeGuard', () => {
  it('lets frames up to the limit through, with 7-, 16- and 64-bit lengths', () => {
    const guard = new FrameSizeGuard(LIMIT);
    const stream = Buffer.concat([frame(5), frame(125), frame(126), frame(LIMIT), frame(0, { opcode: 0x9 })]);
    expect(guard.inspect(stream)).toBeUndefined();
    const wide = new FrameSizeGuard(100_000);
    expect(wide.inspect(frame(70_000))).toBeUndefined();
  });

  it('reports the first frame over the limit', () => {
    const guard = new FrameSizeGuard(LIMIT);
    expect(guard.inspect(Buffer.concat([frame(10), frame(LIMIT + 1)]))).toBe(LIMIT + 1);
  });

  it('reads a 64-bit length', () => {
    const guard = new FrameSizeGuard(LIMIT);
    expect(guard.inspect(frame(40 * 1024))).toBe(40 * 1024);
  });

  it('parses headers split across chunks at every byte boundary', () => {
    const stream = Buffer.concat([frame(3), frame(300), frame(LIMIT), frame(70_000)]);
    for (const size of [1, 2, 3, 5, 7, 13, 1000]) {
      expect(feed(new FrameSizeGuard(LIMIT), stream, size)).toBe(70_000);
    }
  });

  it('checks each fragment of a fragmented message on its own', () => {
    const guard = new FrameSizeGuard(LIMIT);
    const fragments = Buffer.concat([frame(LIMIT, { fin: false }), frame(LIMIT, { fin: false, opcode: 0 }), frame(LIMIT, { opcode: 0 })]);
    expect(guard.inspect(fragments)).toBeUndefined();
  });

  it('handles unmasked frames', () => {
    const guard = new FrameSizeGuard(LIMIT);
    expect(guard.inspect(Buffer.concat([frame(200, { masked: false }), frame(LIMIT + 5, { masked: false })]))).toBe(LIMIT + 5);
  });

  it('treats a 64-bit length beyond the safe range as over the limit', () => {
    const header = Buffer.from([0x82, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4]);
    expect(new FrameSizeGuard(LIMIT).inspect(header)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('reports once, then stays quiet', () => {
    const guard = new FrameSizeGuard(LIMIT);
    expect(guard.inspect(frame(LIMIT + 1))).toBe(LIMIT + 1);
    expect(guard.inspect(frame(LIMIT + 1))).toBeUndefined();
  });
});
